// LSTM, GRU and RNN reference kernels beyond the ONNX backend node tests (which check forward,
// batchwise, sequence_lens, bias and peepholes against the ONNX reference): a bidirectional run
// equals a forward and a reverse run of the same weights, layout 1 equals layout 0 on transposed
// data, sequence_lens stops each batch entry at its length; and every bad input names the node.
#include <gtest/gtest.h>

#include "nn_test_util.hpp"
#include "uniform_tensor.hpp"

namespace tessera::testing {
namespace {

Tensor random_f32(Shape shape, uint32_t seed) {
  return test_util::uniform_tensor(std::move(shape), seed, -0.6f, 0.6f);
}

// Direction d's slice [1, ...] of a [directions, ...] tensor.
Tensor direction(const Tensor& t, int64_t d) {
  Shape s = t.shape();
  const int64_t per = t.numel() / s[0];
  s[0] = 1;
  Tensor out(DType::kFloat32, s);
  std::copy(t.data<float>() + d * per, t.data<float>() + (d + 1) * per, out.data<float>());
  return out;
}

constexpr int64_t kSeq = 4, kBatch = 3, kInput = 5, kHidden = 6;

struct Case {
  const char* op;
  int64_t gates;
};

class Recurrent : public ::testing::TestWithParam<Case> {};

TEST_P(Recurrent, BidirectionalIsAForwardAndAReverseRun) {
  const Case c = GetParam();
  const Tensor x = random_f32({kSeq, kBatch, kInput}, 1);
  const Tensor w = random_f32({2, c.gates * kHidden, kInput}, 2);
  const Tensor r = random_f32({2, c.gates * kHidden, kHidden}, 3);
  const Tensor b = random_f32({2, 2 * c.gates * kHidden}, 4);
  Node bi = make_node(c.op, 4, 2);
  bi.attrs.set("direction", std::string("bidirectional"));
  const std::vector<Tensor> both = run(bi, 14, {x, w, r, b});
  for (int64_t d = 0; d < 2; ++d) {
    Node one = make_node(c.op, 4, 2);
    one.attrs.set("direction", std::string(d == 0 ? "forward" : "reverse"));
    const std::vector<Tensor> single =
        run(one, 14, {x, direction(w, d), direction(r, d), direction(b, d)});
    // Y [seq, 2, batch, hidden]: direction d's rows.
    std::vector<float> want;
    for (int64_t t = 0; t < kSeq; ++t) {
      const float* row = both[0].data<float>() + (t * 2 + d) * kBatch * kHidden;
      want.insert(want.end(), row, row + kBatch * kHidden);
    }
    expect_near(single[0], {kSeq, 1, kBatch, kHidden}, want);
    expect_near(single[1], {1, kBatch, kHidden}, values(direction(both[1], d)));
  }
}

TEST_P(Recurrent, Layout1IsLayout0OnTransposedData) {
  const Case c = GetParam();
  const Tensor x = random_f32({kSeq, kBatch, kInput}, 5);
  const Tensor w = random_f32({1, c.gates * kHidden, kInput}, 6);
  const Tensor r = random_f32({1, c.gates * kHidden, kHidden}, 7);
  Tensor xt(DType::kFloat32, {kBatch, kSeq, kInput});
  for (int64_t t = 0; t < kSeq; ++t) {
    for (int64_t n = 0; n < kBatch; ++n) {
      std::copy(x.data<float>() + (t * kBatch + n) * kInput,
                x.data<float>() + (t * kBatch + n + 1) * kInput,
                xt.data<float>() + (n * kSeq + t) * kInput);
    }
  }
  const std::vector<Tensor> base = run(make_node(c.op, 3, 2), 14, {x, w, r});
  Node batchwise = make_node(c.op, 3, 2);
  batchwise.attrs.set("layout", int64_t{1});
  const std::vector<Tensor> got = run(batchwise, 14, {xt, w, r});
  std::vector<float> want(static_cast<size_t>(kSeq * kBatch * kHidden));
  for (int64_t t = 0; t < kSeq; ++t) {
    for (int64_t n = 0; n < kBatch; ++n) {
      std::copy(base[0].data<float>() + (t * kBatch + n) * kHidden,
                base[0].data<float>() + (t * kBatch + n + 1) * kHidden,
                want.begin() + (n * kSeq + t) * kHidden);
    }
  }
  expect_near(got[0], {kBatch, kSeq, 1, kHidden}, want);
  expect_near(got[1], {kBatch, 1, kHidden}, values(base[1]));
}

TEST_P(Recurrent, SequenceLensStopEachEntry) {
  // Entry 1 of length 2 gives, for its first two steps, what a length-2 sequence gives alone,
  // zeros after, and the state after step 2.
  const Case c = GetParam();
  const Tensor x = random_f32({kSeq, kBatch, kInput}, 8);
  const Tensor w = random_f32({1, c.gates * kHidden, kInput}, 9);
  const Tensor r = random_f32({1, c.gates * kHidden, kHidden}, 10);
  const Tensor lens = Tensor::from_vector<int32_t>({kBatch}, {4, 2, 3});
  const std::vector<Tensor> got = run(make_node(c.op, 5, 2), 14, {x, w, r, Tensor(), lens});
  Tensor short_x(DType::kFloat32, {2, 1, kInput});
  for (int64_t t = 0; t < 2; ++t) {
    std::copy(x.data<float>() + (t * kBatch + 1) * kInput,
              x.data<float>() + (t * kBatch + 2) * kInput, short_x.data<float>() + t * kInput);
  }
  const std::vector<Tensor> alone = run(make_node(c.op, 3, 2), 14, {short_x, w, r});
  for (int64_t t = 0; t < kSeq; ++t) {
    const float* row = got[0].data<float>() + (t * kBatch + 1) * kHidden;
    for (int64_t j = 0; j < kHidden; ++j) {
      const float want = t < 2 ? alone[0].data<float>()[t * kHidden + j] : 0.0f;
      EXPECT_NEAR(row[j], want, 1e-6f) << "step " << t << " unit " << j;
    }
  }
  for (int64_t j = 0; j < kHidden; ++j) {
    EXPECT_NEAR(got[1].data<float>()[kHidden + j], alone[1].data<float>()[j], 1e-6f) << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Recurrent,
                         ::testing::Values(Case{"LSTM", 4}, Case{"GRU", 3}, Case{"RNN", 1}),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.op; });

TEST(RecurrentBadInput, EveryCaseNamesTheNode) {
  const Tensor x = random_f32({kSeq, kBatch, kInput}, 11);
  const Tensor w = random_f32({1, 4 * kHidden, kInput}, 12);
  const Tensor r = random_f32({1, 4 * kHidden, kHidden}, 13);
  Node node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("direction", std::string("sideways"));
  expect_error(node, 14, {x, w, r}, "attribute 'direction' = 'sideways'");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("hidden_size", int64_t{7});
  expect_error(node, 14, {x, w, r}, "attribute 'hidden_size' = 7 does not match input 'W'");
  expect_error(make_node("LSTM", 3, 1, "bad_lstm"), 14,
               {x, random_f32({1, 4 * kHidden, kInput + 1}, 14), r}, "input 'W' has shape");
  expect_error(make_node("LSTM", 3, 1, "bad_lstm"), 14, {x, w, random_f32({1, 3, 3}, 15)},
               "input 'R' has shape [1, 3, 3]");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("activations", std::vector<std::string>{"Sigmoid", "Tanh", "Swish"});
  expect_error(node, 14, {x, w, r}, "'Swish', which is not a recurrent activation");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("activations", std::vector<std::string>{"Sigmoid", "Tanh"});
  expect_error(node, 14, {x, w, r}, "attribute 'activations' has 2 names; expected 3");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("activations", int64_t{1});  // a wrong kind is an error, not the defaults
  expect_error(node, 14, {x, w, r}, "activations");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("direction", int64_t{1});
  expect_error(node, 14, {x, w, r}, "direction");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("layout", int64_t{2});
  expect_error(node, 14, {x, w, r}, "attribute 'layout' must be 0 or 1");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("clip", -1.0f);
  expect_error(node, 14, {x, w, r}, "attribute 'clip' must be a positive number");
  node = make_node("LSTM", 3, 1, "bad_lstm");
  node.attrs.set("input_forget", int64_t{2});
  expect_error(node, 14, {x, w, r}, "attribute 'input_forget' must be 0 or 1");
  expect_error(make_node("LSTM", 8, 1, "bad_lstm"), 14,
               {x, w, r, Tensor(), Tensor(), Tensor(), Tensor(), random_f32({1, 5}, 16)},
               "input 'P' has shape [1, 5]");
  expect_error(make_node("LSTM", 5, 1, "bad_lstm"), 14,
               {x, w, r, Tensor(), i64({kBatch}, {1, 2, 3})}, "input 4 has dtype int64");
  expect_error(make_node("LSTM", 3, 1, "bad_lstm"), 14, {random_f32({kSeq, kInput}, 17), w, r},
               "input 'X' has shape [4, 5]; expected rank 3");
  Node gru = make_node("GRU", 3, 1, "bad_gru");
  gru.attrs.set("linear_before_reset", int64_t{3});
  expect_error(
      gru, 14,
      {x, random_f32({1, 3 * kHidden, kInput}, 18), random_f32({1, 3 * kHidden, kHidden}, 19)},
      "attribute 'linear_before_reset' must be 0 or 1");
  expect_error(make_node("RNN", 6, 1, "bad_rnn"), 14,
               {x, random_f32({1, kHidden, kInput}, 20), random_f32({1, kHidden, kHidden}, 21),
                Tensor(), Tensor(), random_f32({1, kBatch + 1, kHidden}, 22)},
               "input 'initial_h' has shape [1, 4, 6]");
}

}  // namespace
}  // namespace tessera::testing
