// Values that are not float32 on the vulkan device (shaders/typed.glsl) at the edges the shared
// differential cases do not reach (their random integers are small): int64 values beyond 32
// bits, wrapping integer arithmetic, Cast's saturation and NaN, comparisons and ArgMax/ArgMin
// with NaN and ties, elements narrower than a word written by several invocations and by
// several Concat slices, and half regions carrying integers unchanged. Every node must run on
// 'vulkan:any' (validation on); outputs must equal tessera::run_reference's bit for bit.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "vulkan_test_util.hpp"

namespace tessera::test {
namespace {

using V = std::vector<int64_t>;

struct ValueCase {
  std::string name;
  std::function<Graph()> build;
  std::function<std::map<std::string, Tensor>()> inputs;
  std::string precision = "fp32";
};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();

Attributes to(DType d) {
  return attrs({{"to", static_cast<int64_t>(d)}});
}

std::vector<ValueCase> cases() {
  std::vector<ValueCase> c;
  // Float to integer truncates toward zero and saturates, NaN -> 0; to bool NaN is true.
  c.push_back(
      {"CastFloatSaturatesAndNaN",
       [] {
         GraphBuilder b;
         b.input("x", {16});
         for (DType d : {DType::kInt64, DType::kInt32, DType::kInt8, DType::kUInt8, DType::kBool}) {
           const std::string y = "y" + std::to_string(static_cast<int>(d));
           b.node("Cast", {"x"}, {y}, to(d)).output(y);
         }
         return b.build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"x", Tensor::from_vector<float>(
                       {16}, {kNaN, kInf, -kInf, 1e20f, -1e20f, 2.9f, -2.9f, 127.9f, -128.9f,
                              300.5f, -0.5f, 0.0f, -0.0f, 3e9f, -3e9f, 255.99f})}};
       }});
  // Integer narrowing wraps; int64 to float rounds; bool and 8-bit sources widen.
  c.push_back({"CastIntegersWrapAndWiden",
               [] {
                 GraphBuilder b;
                 b.input("a", {8}, DType::kInt64)
                     .input("u", {8}, DType::kUInt8)
                     .input("s", {8}, DType::kInt8)
                     .input("m", {8}, DType::kBool);
                 const std::vector<std::pair<std::string, DType>> casts = {
                     {"a", DType::kInt32},  {"a", DType::kInt8},    {"a", DType::kUInt8},
                     {"a", DType::kBool},   {"a", DType::kFloat32}, {"u", DType::kInt64},
                     {"s", DType::kInt32},  {"s", DType::kFloat32}, {"m", DType::kInt64},
                     {"m", DType::kFloat32}};
                 int k = 0;
                 for (const auto& [x, d] : casts) {
                   const std::string y = "y" + std::to_string(k++);
                   b.node("Cast", {x}, {y}, to(d)).output(y);
                 }
                 return b.build();
               },
               [] {
                 return std::map<std::string, Tensor>{
                     {"a", Tensor::from_vector<int64_t>(
                               {8}, {(int64_t{1} << 40) + 5, -(int64_t{1} << 40) - 129,
                                     int64_t{1} << 31, -1, 300, -200, kI64Max, kI64Min})},
                     {"u", Tensor::from_vector<uint8_t>({8}, {0, 1, 127, 128, 200, 255, 7, 9})},
                     {"s", Tensor::from_vector<int8_t>({8}, {-128, -1, 0, 1, 127, -7, 9, 100})},
                     {"m", Tensor::from_vector<bool>(
                               {8}, {true, false, false, true, true, false, true, true})}};
               }});
  // int64 arithmetic on values beyond 32 bits with broadcasting, wrapping at the ends; Div by a
  // constant truncates toward zero and lowest / -1 wraps to lowest.
  c.push_back({"Int64ArithmeticBeyond32Bits",
               [] {
                 GraphBuilder b;
                 b.input("a", {2, 4}, DType::kInt64)
                     .input("b", {4}, DType::kInt64)
                     .constant("d",
                               Tensor::from_vector<int64_t>({4}, {3, -1, -7, int64_t{1} << 33}));
                 for (const char* op : {"Add", "Sub", "Mul", "Max", "Min"}) {
                   b.node(op, {"a", "b"}, {op}).output(op);
                 }
                 return b.node("Div", {"a", "d"}, {"q"}).output("q").build();
               },
               [] {
                 return std::map<std::string, Tensor>{
                     {"a", Tensor::from_vector<int64_t>(
                               {2, 4}, {kI64Max, kI64Min, (int64_t{1} << 35) + 3, -5,
                                        -(int64_t{1} << 40), 123456789012, -7, kI64Min})},
                     {"b", Tensor::from_vector<int64_t>(
                               {4}, {1, -1, (int64_t{1} << 32) - 1, -(int64_t{1} << 33)})}};
               }});
  c.push_back(
      {"Int32ArithmeticWraps",
       [] {
         GraphBuilder b;
         b.input("a", {6}, DType::kInt32)
             .input("b", {1}, DType::kInt32)
             .constant("d", Tensor::from_vector<int32_t>({6}, {-1, 2, -3, 5, -1, 7}));
         for (const char* op : {"Add", "Sub", "Mul", "Max", "Min"}) {
           b.node(op, {"a", "b"}, {op}).output(op);
         }
         return b.node("Div", {"a", "d"}, {"q"}).output("q").build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"a", Tensor::from_vector<int32_t>({6}, {kI32Max, kI32Min, -9, 65537, kI32Min, -100})},
             {"b", Tensor::from_vector<int32_t>({1}, {65536})}};
       }});
  // A NaN makes every comparison false (Equal too); int64 operands that differ only in the high
  // word; bool Equal and the logic ops.
  c.push_back(
      {"ComparisonsNaNHighWordsAndLogic",
       [] {
         GraphBuilder b;
         b.input("x", {6})
             .input("z", {6})
             .input("i", {2, 3}, DType::kInt64)
             .input("j", {3}, DType::kInt64)
             .input("p", {7}, DType::kBool)
             .input("q", {7}, DType::kBool);
         for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"}) {
           const std::string f = std::string("f") + op, n = std::string("n") + op;
           b.node(op, {"x", "z"}, {f}).output(f);
           b.node(op, {"i", "j"}, {n}).output(n);
         }
         for (const char* op : {"Equal", "And", "Or", "Xor"}) {
           const std::string l = std::string("l") + op;
           b.node(op, {"p", "q"}, {l}).output(l);
         }
         return b.node("Not", {"p"}, {"np"}).output("np").build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"x", Tensor::from_vector<float>({6}, {kNaN, 1.0f, kNaN, -kInf, 2.0f, 0.0f})},
             {"z", Tensor::from_vector<float>({6}, {kNaN, kNaN, 1.0f, -kInf, 3.0f, -0.0f})},
             {"i", Tensor::from_vector<int64_t>({2, 3}, {int64_t{1} << 32, -(int64_t{1} << 32), 5,
                                                         7, (int64_t{1} << 33) + 1, kI64Min})},
             {"j", Tensor::from_vector<int64_t>({3}, {0, 0, (int64_t{1} << 32) + 5})},
             {"p", Tensor::from_vector<bool>({7}, {true, true, false, false, true, false, true})},
             {"q", Tensor::from_vector<bool>({7}, {true, false, true, false, false, false, true})}};
       }});
  // NaN wins (the first, or the last with select_last_index); ties keep the first or the last.
  c.push_back(
      {"ArgExtremesNaNAndTies",
       [] {
         GraphBuilder b;
         b.input("x", {3, 5}).input("i", {2, 3}, DType::kInt64).input("k", {3, 2}, DType::kInt32);
         for (const char* op : {"ArgMax", "ArgMin"}) {
           for (int64_t last : {0, 1}) {
             const std::string y = std::string(op) + std::to_string(last);
             b.node(op, {"x"}, {y}, attrs({{"axis", int64_t{1}}, {"select_last_index", last}}))
                 .output(y);
           }
         }
         return b.node("ArgMax", {"i"}, {"im"}, attrs({{"axis", int64_t{1}}}))
             .output("im")
             .node("ArgMin", {"k"}, {"km"},
                   attrs({{"axis", int64_t{0}},
                          {"keepdims", int64_t{0}},
                          {"select_last_index", int64_t{1}}}))
             .output("km")
             .build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"x", Tensor::from_vector<float>({3, 5}, {1.0f, kNaN, 3.0f, kNaN, 3.0f,    //
                                                       2.0f, 2.0f, -1.0f, -1.0f, 0.5f,  //
                                                       -kInf, kInf, kInf, -kInf, 0.0f})},
             {"i",
              Tensor::from_vector<int64_t>({2, 3}, {int64_t{1} << 32, 1, (int64_t{1} << 32) + 1,
                                                    kI64Min, -1, -(int64_t{1} << 32)})},
             {"k", Tensor::from_vector<int32_t>({3, 2}, {4, kI32Min, 4, 0, -3, kI32Min})}};
       }});
  // Elements narrower than a word: Concat slices sharing words, Transpose, a negative-step Slice,
  // Gather with negative indices, Expand and Where of 1- and 8-byte elements.
  c.push_back(
      {"SubWordAndInt64Moves",
       [] {
         return GraphBuilder()
             .input("p", {3}, DType::kBool)
             .input("q", {5}, DType::kBool)
             .input("r", {2}, DType::kBool)
             .input("s", {3, 5}, DType::kInt8)
             .input("u", {9}, DType::kUInt8)
             .input("a", {4, 3}, DType::kInt64)
             .input("m", {3, 1}, DType::kBool)
             .constant("starts", Tensor::from_vector<int64_t>({1}, {8}))
             .constant("ends", Tensor::from_vector<int64_t>({1}, {0}))
             .constant("steps", Tensor::from_vector<int64_t>({1}, {-3}))
             .constant("axes", Tensor::from_vector<int64_t>({1}, {0}))
             .constant("idx", Tensor::from_vector<int64_t>({3}, {-1, 0, 2}))
             .constant("shape", Tensor::from_vector<int64_t>({2}, {3, 5}))
             .constant("starts1", Tensor::from_vector<int64_t>({1}, {1}))
             .constant("ends1", Tensor::from_vector<int64_t>({1}, {4}))
             .node("Concat", {"p", "q", "r", "q"}, {"cat"}, attrs({{"axis", int64_t{0}}}))
             .node("Transpose", {"s"}, {"st"})
             .node("Transpose", {"st"}, {"st2"})
             .node("Slice", {"u", "starts", "ends", "axes", "steps"}, {"us"})
             .node("Gather", {"a", "idx"}, {"ag"}, attrs({{"axis", int64_t{0}}}))
             .node("Expand", {"m", "shape"}, {"me"})
             .node("Where", {"me", "s", "st2"}, {"ws"})
             .node("Slice", {"a", "starts1", "ends1"}, {"a3"})
             .node("Where", {"m", "ag", "a3"}, {"wa"})
             .output("cat")
             .output("st")
             .output("us")
             .output("ag")
             .output("me")
             .output("ws")
             .output("wa")
             .build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"p", Tensor::from_vector<bool>({3}, {true, false, true})},
             {"q", Tensor::from_vector<bool>({5}, {false, true, true, false, true})},
             {"r", Tensor::from_vector<bool>({2}, {true, true})},
             {"s", Tensor::from_vector<int8_t>(
                       {3, 5}, {-128, -1, 0, 1, 127, 5, -6, 7, -8, 9, 10, -11, 12, -13, 14})},
             {"u", Tensor::from_vector<uint8_t>({9}, {0, 1, 2, 253, 254, 255, 6, 7, 8})},
             {"a", Tensor::from_vector<int64_t>(
                       {4, 3}, {kI64Min, kI64Max, int64_t{1} << 40, -1, 2, -3,
                                (int64_t{1} << 32) + 7, 8, -9, 10, -(int64_t{1} << 50), 12})},
             {"m", Tensor::from_vector<bool>({3, 1}, {true, false, true})}};
       }});
  // The other strided copies of 1- and 8-byte elements: Split, Tile, DepthToSpace, SpaceToDepth.
  c.push_back(
      {"SplitTileAndSpaceMovesOfIntegers",
       [] {
         return GraphBuilder()
             .input("s", {7}, DType::kInt8)
             .input("m", {2, 3}, DType::kBool)
             .input("a", {1, 4, 2, 3}, DType::kInt64)
             .input("u", {1, 2, 4, 2}, DType::kUInt8)
             .constant("parts", Tensor::from_vector<int64_t>({2}, {3, 4}))
             .constant("reps", Tensor::from_vector<int64_t>({2}, {3, 2}))
             .node("Split", {"s", "parts"}, {"s0", "s1"}, attrs({{"axis", int64_t{0}}}))
             .node("Tile", {"m", "reps"}, {"mt"})
             .node("DepthToSpace", {"a"}, {"ad"}, attrs({{"blocksize", int64_t{2}}}))
             .node("SpaceToDepth", {"u"}, {"us"}, attrs({{"blocksize", int64_t{2}}}))
             .output("s0")
             .output("s1")
             .output("mt")
             .output("ad")
             .output("us")
             .build();
       },
       [] {
         std::vector<int64_t> a(24);
         for (size_t i = 0; i < a.size(); ++i) {
           a[i] = (static_cast<int64_t>(i) << 36) - static_cast<int64_t>(i) * 3;
         }
         std::vector<uint8_t> u(16);
         for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(250 + i);
         return std::map<std::string, Tensor>{
             {"s", Tensor::from_vector<int8_t>({7}, {-128, -1, 0, 1, 127, -7, 9})},
             {"m", Tensor::from_vector<bool>({2, 3}, {true, false, false, true, true, false})},
             {"a", Tensor::from_vector<int64_t>({1, 4, 2, 3}, a)},
             {"u", Tensor::from_vector<uint8_t>({1, 2, 4, 2}, u)}};
       }});
  // Gather with indices computed at run time (negative ones count from the end), of tables of
  // every dtype, along the first and an inner axis.
  c.push_back(
      {"GatherRuntimeIndicesOfEveryDtype",
       [] {
         return GraphBuilder()
             .input("ids", {2, 3}, DType::kInt64)
             .input("ids32", {4}, DType::kInt32)
             .input("f", {5, 3})
             .input("a", {5, 2}, DType::kInt64)
             .input("m", {5}, DType::kBool)
             .input("s", {2, 5}, DType::kInt8)
             .node("Gather", {"f", "ids"}, {"gf"})
             .node("Gather", {"a", "ids"}, {"ga"})
             .node("Gather", {"m", "ids32"}, {"gm"})
             .node("Gather", {"s", "ids32"}, {"gs"}, attrs({{"axis", int64_t{1}}}))
             .output("gf")
             .output("ga")
             .output("gm")
             .output("gs")
             .build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"ids", Tensor::from_vector<int64_t>({2, 3}, {0, -1, 4, -5, 2, 2})},
             {"ids32", Tensor::from_vector<int32_t>({4}, {-2, 0, 3, 1})},
             {"f", Tensor::from_vector<float>({5, 3},
                                              {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})},
             {"a", Tensor::from_vector<int64_t>(
                       {5, 2}, {kI64Min, 1, 2, kI64Max, int64_t{1} << 40, 5, 6, -7, 8, 9})},
             {"m", Tensor::from_vector<bool>({5}, {true, false, false, true, true})},
             {"s", Tensor::from_vector<int8_t>({2, 5}, {-128, 1, 2, 3, 127, 5, 6, 7, 8, -9})}};
       }});
  // A half region keeps integers and bools as they are: only float values are half.
  c.push_back(
      {"HalfRegionKeepsIntegers",
       [] {
         return GraphBuilder()
             .input("x", {2, 6})
             .input("z", {2, 6})
             .input("a", {2, 6}, DType::kInt64)
             .node("Less", {"x", "z"}, {"lt"})
             .node("Where", {"lt", "x", "z"}, {"mn"})
             .node("ArgMax", {"x"}, {"am"}, attrs({{"axis", int64_t{1}}}))
             .node("Add", {"a", "am"}, {"sum"})
             .node("Cast", {"lt"}, {"ltf"}, to(DType::kFloat32))
             .node("Cast", {"x"}, {"xi"}, to(DType::kInt32))
             .node("Gather", {"z", "am"}, {"zg"}, attrs({{"axis", int64_t{1}}}))
             .output("lt")
             .output("mn")
             .output("sum")
             .output("ltf")
             .output("xi")
             .output("zg")
             .build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"x", Tensor::from_vector<float>({2, 6}, {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -8.5f, 9.0f,
                                                       10.5f, -11.0f, 12.0f, 13.75f, -14.0f})},
             {"z", Tensor::from_vector<float>({2, 6}, {2.0f, -3.0f, 3.25f, 1.0f, -7.0f, 8.5f, -9.0f,
                                                       11.0f, 11.0f, 12.5f, -13.75f, 14.0f})},
             {"a",
              Tensor::from_vector<int64_t>({2, 6}, {kI64Max - 10, 1, -(int64_t{1} << 40), 3, 4, 5,
                                                    6, 7, 8, 9, int64_t{1} << 33, kI64Min})}};
       },
       "fp16-acc32"});
  // TopK's order (shaders/top_k.comp): NaNs above every number (first when largest, last when
  // smallest), +-inf, -0 and +0 equal (index order), ties in index order, along a middle axis.
  c.push_back({"TopKNaNInfSignedZeroTies",
               [] {
                 return GraphBuilder()
                     .input("x", {2, 7, 2})
                     .constant("k5", Tensor::from_vector<int64_t>({1}, {5}))
                     .constant("k7", Tensor::from_vector<int64_t>({1}, {7}))
                     .node("TopK", {"x", "k5"}, {"lv", "li"}, attrs({{"axis", int64_t{1}}}))
                     .node("TopK", {"x", "k7"}, {"sv", "si"},
                           attrs({{"axis", int64_t{-2}}, {"largest", int64_t{0}}}))
                     .output("lv")
                     .output("li")
                     .output("sv")
                     .output("si")
                     .build();
               },
               [] {
                 return std::map<std::string, Tensor>{
                     {"x", Tensor::from_vector<float>(
                               {2, 7, 2}, {1.0f, -0.0f, kNaN, 0.0f,  -kInf, -0.0f, 1.0f,  0.0f,
                                           kInf, kNaN,  kNaN, 2.0f,  1.0f,  kNaN,  -3.0f, 5.0f,
                                           5.0f, 5.0f,  kNaN, -kInf, kInf,  kInf,  5.0f,  kNaN,
                                           -3.0f, 0.0f, 5.0f, -0.0f})}};
               }});
  // IsNaN and IsInf (each sign), and Trilu of int8 and bool (elements narrower than a word,
  // written by neighbouring invocations) with k beyond the matrix either way, and of float32.
  c.push_back(
      {"IsNaNIsInfTriluNarrow",
       [] {
         GraphBuilder b(14);
         b.input("x", {2, 3}).input("q", {2, 3, 5}, DType::kInt8).input("m", {5, 3}, DType::kBool);
         b.constant("k0", Tensor::from_vector<int64_t>({}, {-1}))
             .constant("k9", Tensor::from_vector<int64_t>({}, {9}))
             .constant("kneg", Tensor::from_vector<int64_t>({}, {-9}));
         b.node("IsNaN", {"x"}, {"nan"}).output("nan");
         b.node("IsInf", {"x"}, {"inf"}).output("inf");
         b.node("IsInf", {"x"}, {"pos"}, attrs({{"detect_negative", int64_t{0}}})).output("pos");
         b.node("IsInf", {"x"}, {"neg"}, attrs({{"detect_positive", int64_t{0}}})).output("neg");
         b.node("Trilu", {"q", "k0"}, {"qu"}).output("qu");
         b.node("Trilu", {"q"}, {"ql"}, attrs({{"upper", int64_t{0}}})).output("ql");
         b.node("Trilu", {"m", "k9"}, {"none"}).output("none");
         b.node("Trilu", {"m", "kneg"}, {"all"}).output("all");
         b.node("Trilu", {"x", "k0"}, {"xl"}, attrs({{"upper", int64_t{0}}})).output("xl");
         return b.build();
       },
       [] {
         std::vector<int8_t> q(30);
         for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(7 * i - 100);
         return std::map<std::string, Tensor>{
             {"x", Tensor::from_vector<float>({2, 3}, {kNaN, kInf, -kInf, 0.0f, -2.5f, kNaN})},
             {"q", Tensor::from_vector<int8_t>({2, 3, 5}, q)},
             {"m", Tensor::from_vector<bool>({5, 3}, {true, true, false, true, true, true, false,
                                                       true, true, true, true, true, false, true,
                                                       true})}};
       }});
  // Sum, Mean, Max and Min of four and of one broadcasting input, values exact in any order
  // (Mean of four: times 1/4 is exact).
  c.push_back(
      {"VariadicFourInputsAndOne",
       [] {
         GraphBuilder b;
         b.input("a", {2, 3}).input("b", {3}).input("c", {2, 1}).input("d", {});
         for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
           b.node(op, {"a", "b", "c", "d"}, {op}).output(op);
         }
         b.node("Sum", {"c"}, {"one"}).output("one");
         return b.build();
       },
       [] {
         return std::map<std::string, Tensor>{
             {"a", Tensor::from_vector<float>({2, 3}, {1.0f, -2.0f, 3.5f, 8.0f, -0.5f, 0.0f})},
             {"b", Tensor::from_vector<float>({3}, {4.0f, -1.0f, 0.25f})},
             {"c", Tensor::from_vector<float>({2, 1}, {-6.0f, 2.0f})},
             {"d", Tensor::from_vector<float>({}, {0.5f})}};
       }});
  return c;
}

class VulkanValuesTest : public ::testing::TestWithParam<ValueCase> {};

void PrintTo(const ValueCase& c, std::ostream* os) {
  *os << c.name;
}

TEST_P(VulkanValuesTest, EqualsReferenceBitForBit) {
  TESSERA_REQUIRE_VULKAN();
  const ValueCase& c = GetParam();
  const Graph graph = c.build();
  SessionOptions options = vulkan_options();
  options.precision = c.precision;
  Session session(graph, options, vulkan_host());
  for (const NodePlacement& p : session.plan().nodes) {
    ASSERT_EQ(p.plugin, "vulkan") << p.node << ": " << p.reason;
  }
  const auto inputs = c.inputs();
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    const std::string& name = graph.values[graph.outputs[o]].name;
    ASSERT_EQ(got[o].dtype(), want[o].dtype()) << name;
    ASSERT_EQ(got[o].shape(), want[o].shape()) << name;
    // Every value here is exact in half too, so even the half region's float outputs match.
    if (std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()) == 0) continue;
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      EXPECT_EQ(got[o].scalar_as_double(i), want[o].scalar_as_double(i))
          << c.name << " output " << name << " element " << i;
    }
    ADD_FAILURE() << c.name << " output " << name << " differs from the reference";
  }
}

INSTANTIATE_TEST_SUITE_P(vulkan, VulkanValuesTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ValueCase>& info) {
                           return info.param.name;
                         });

// An index outside [-d, d) read at run time fails that run naming the node, as core's Gather
// does; the next run of the same session with good indices succeeds.
TEST(VulkanValuesRuns, OutOfRangeRuntimeIndexFailsTheRun) {
  TESSERA_REQUIRE_VULKAN();
  const Graph graph = GraphBuilder()
                          .input("ids", {3}, DType::kInt64)
                          .input("table", {4, 2})
                          .node("Gather", {"table", "ids"}, {"y"}, {}, "embed")
                          .output("y")
                          .build();
  Session session(graph, vulkan_options(), vulkan_host());
  auto inputs = random_inputs(graph, 2);
  for (int64_t bad : {int64_t{4}, int64_t{-5}, int64_t{1} << 32}) {
    inputs["ids"] = Tensor::from_vector<int64_t>({3}, {0, bad, 1});
    std::string error;
    try {
      session.run(inputs);
    } catch (const std::exception& e) {
      error = e.what();
    }
    EXPECT_NE(error.find("embed"), std::string::npos) << bad << ": " << error;
    EXPECT_NE(error.find("outside [-4, 4)"), std::string::npos) << bad << ": " << error;
  }
  inputs["ids"] = Tensor::from_vector<int64_t>({3}, {3, -4, 1});
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), want[0].nbytes()), 0);
}

}  // namespace
}  // namespace tessera::test
