// NumPy .npy reading and writing: format versions 1.0, 2.0 and 3.0, little-endian, C order,
// the dtypes Tensor holds. Written files are version 1.0 (2.0 when the header needs it), padded
// to 64 bytes like numpy, and land atomically: a temporary file beside the target, then a
// rename (or a hard link when replacing is not allowed, so an existing file is never clobbered).
#include "tessera/npy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "tessera/file_util.hpp"

namespace tessera {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DTypeCode {
  DType dtype;
  const char* descr;  // as numpy writes it
};
constexpr DTypeCode kCodes[] = {
    {DType::kFloat32, "<f4"}, {DType::kFloat16, "<f2"}, {DType::kInt64, "<i8"},
    {DType::kInt32, "<i4"},   {DType::kInt8, "|i1"},    {DType::kUInt8, "|u1"},
    {DType::kBool, "|b1"},
};

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Error(path + ": " + message);
}

DType dtype_from_descr(const std::string& path, std::string descr) {
  // One-byte types carry no byte order; numpy writes '|' but '<' and '=' mean the same.
  if (descr.size() == 3 && descr[2] == '1' && (descr[0] == '<' || descr[0] == '=')) descr[0] = '|';
  // '=' is native order; every target Tessera builds for is little-endian.
  if (!descr.empty() && descr[0] == '=') descr[0] = '<';
  for (const DTypeCode& c : kCodes) {
    if (descr == c.descr) return c.dtype;
  }
  fail(path, "unsupported .npy dtype '" + descr +
                 "' (supported: <f4, <f2, <i8, <i4, |i1, |u1, |b1; big-endian is not)");
}

// A tiny reader for the header's Python dict literal: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Only the forms numpy writes are accepted.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), text_(text) {}

  void parse(std::string& descr, bool& fortran_order, Shape& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        shape = parse_shape();
        have_shape = true;
      } else {
        bad("unknown key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') bad("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) bad("trailing text after '}'");
    if (!have_descr || !have_order || !have_shape) {
      bad("needs the keys 'descr', 'fortran_order' and 'shape'");
    }
  }

 private:
  [[noreturn]] void bad(const std::string& what) {
    fail(path_,
         "malformed .npy header (" + what + " at offset " + std::to_string(pos_) + "): " + text_);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    skip_space();
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      size_t digits = 0;
      int64_t dim = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (dim > (INT64_MAX - 9) / 10) bad("dimension too large");
        dim = dim * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) bad("expected a dimension");
      if (peek() == 'L') ++pos_;  // Python 2 longs in old files
      shape.push_back(dim);
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        bad("expected ',' or ')' in shape");
      }
    }
    ++pos_;
    return shape;
  }

  const std::string& path_;
  const std::string& text_;
  size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

std::string make_header(const Tensor& tensor, int& major) {
  const char* descr = nullptr;
  for (const DTypeCode& c : kCodes) {
    if (c.dtype == tensor.dtype()) descr = c.descr;
  }
  if (descr == nullptr) throw Error("write_npy: tensor has no dtype");
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    shape += (i ? ", " : "") + std::to_string(tensor.shape()[i]);
  }
  if (tensor.shape().size() == 1) shape += ",";
  shape += ")";
  std::string dict =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and a final newline so the data starts 64-byte aligned, as numpy does.
  major = dict.size() + 1 + kMagicLen + 4 > 65535 ? 2 : 1;
  const size_t preamble = kMagicLen + 2 + (major == 1 ? 2 : 4);
  const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict += '\n';
  return dict;
}

// Where the bytes of one .npy come from: a file, or memory (an .npz member).
struct NpySource {
  int64_t size = 0;
  std::function<size_t(int64_t offset, void* dst, size_t n)> read_at;
};

// The largest header numpy writes is far below 16 MiB.
constexpr int64_t kMaxHeaderBytes = int64_t{1} << 24;

// Decodes the .npy held by `in`; messages name `path`.
Tensor decode_npy(const std::string& path, const NpySource& in) {
  unsigned char pre[12] = {};
  if (in.read_at(0, pre, 10) != 10 || std::memcmp(pre, kMagic, kMagicLen) != 0) {
    fail(path, "not a .npy file (missing the \\x93NUMPY magic)");
  }
  const int major = pre[6];
  size_t header_len = 0;
  int64_t header_start = 10;
  if (major == 1) {
    header_len = read_le(pre + 8, 2);
  } else if (major == 2 || major == 3) {
    if (in.read_at(10, pre + 10, 2) != 2) fail(path, "truncated .npy preamble");
    header_len = read_le(pre + 8, 4);
    header_start = 12;
  } else {
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(pre[7]) + " (supported: 1.0, 2.0, 3.0)");
  }
  // Guards a huge allocation from a corrupt length; real headers are a few hundred bytes.
  if (static_cast<int64_t>(header_len) > kMaxHeaderBytes)
    fail(path, "implausible .npy header length " + std::to_string(header_len));
  std::string header(header_len, '\0');
  if (in.read_at(header_start, header.data(), header_len) != header_len) {
    fail(path, "truncated .npy header");
  }

  std::string descr;
  bool fortran_order = false;
  Shape shape;
  HeaderParser(path, header).parse(descr, fortran_order, shape);
  if (fortran_order) {
    fail(path, "Fortran-order arrays are not supported; save with np.ascontiguousarray(a)");
  }
  const DType dtype = dtype_from_descr(path, descr);
  int64_t nbytes = 0;
  try {
    nbytes = shape_nbytes(shape, dtype);
  } catch (const Error& e) {
    fail(path, std::string("bad .npy shape: ") + e.what());
  }
  // The file must hold exactly the data the header declares; checked before allocating, so a
  // header declaring a huge shape over no data costs nothing.
  const int64_t data_start = header_start + static_cast<int64_t>(header_len);
  const int64_t found = in.size - data_start;
  if (found < nbytes) {
    fail(path, "data is truncated: shape " + shape_str(shape) + " of " + descr + " needs " +
                   std::to_string(nbytes) + " bytes, found " + std::to_string(found));
  }
  if (found > nbytes) {
    fail(path, "has bytes after the " + std::to_string(nbytes) + " bytes of data for " +
                   shape_str(shape) + " " + descr);
  }
  Tensor tensor;
  try {
    tensor = Tensor(dtype, shape);
  } catch (const Error& e) {
    fail(path, std::string("bad .npy shape: ") + e.what());
  }
  if (in.read_at(data_start, tensor.raw(), tensor.nbytes()) != tensor.nbytes()) {
    fail(path, "data is truncated (the file shrank while it was read)");
  }
  if (dtype == DType::kBool) {
    // Any byte other than 0/1 is not a valid C++ bool; normalise like numpy does on reads.
    auto* bytes = static_cast<unsigned char*>(tensor.raw());
    for (size_t i = 0; i < tensor.nbytes(); ++i) bytes[i] = bytes[i] != 0;
  }
  return tensor;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  // The data must fit the memory limit.
  int64_t max_bytes = 0;
  if (!try_add(memory_limit(), kMaxHeaderBytes + 12, max_bytes)) max_bytes = INT64_MAX;
  const InputFile in(path, ".npy file", max_bytes);
  return decode_npy(path, {in.size(), [&](int64_t offset, void* dst, size_t n) {
                             return in.read_at(offset, dst, n);
                           }});
}

Tensor parse_npy(const std::string& bytes, const std::string& name) {
  return decode_npy(name, {static_cast<int64_t>(bytes.size()),
                           [&](int64_t offset, void* dst, size_t n) -> size_t {
                             if (offset < 0 || static_cast<uint64_t>(offset) >= bytes.size()) {
                               return 0;
                             }
                             n = std::min(n, bytes.size() - static_cast<size_t>(offset));
                             std::memcpy(dst, bytes.data() + offset, n);
                             return n;
                           }});
}

void write_npy(const std::string& path, const Tensor& tensor, bool overwrite) {
  if (tensor.empty()) fail(path, "write_npy: tensor has no dtype");
  int major = 1;
  const std::string header = make_header(tensor, major);
  std::string bytes(kMagic, kMagicLen);
  bytes += static_cast<char>(major);
  bytes += '\0';
  const uint32_t len = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    bytes += static_cast<char>((len >> (8 * i)) & 0xff);
  bytes += header;

  // write_file_atomic: a mkstemp temporary beside `path` (never a predictable name a planted
  // symlink could redirect), then rename, or link when replacing is not allowed.
  write_file_atomic(path,
                    {std::string_view(bytes),
                     std::string_view(static_cast<const char*>(tensor.raw()), tensor.nbytes())},
                    overwrite);
}

}  // namespace tessera
