// .npz inputs: a small zip reader (stored and deflated members, zip64 sizes, CRC-32 checked)
// and the --input handling that gives each array of an archive to the input of its name.
#include "npz.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <set>

#include "run_common.hpp"
#include "tessera/file_util.hpp"
#include "tessera/npy.hpp"
#include "tessera/passes.hpp"

namespace tessera::cli {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndRecord = 0x06054b50;
constexpr uint32_t kZip64EndRecord = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint16_t kZip64Extra = 0x0001;
constexpr uint64_t kSaturated32 = 0xffffffffu;
constexpr uint64_t kSaturated16 = 0xffffu;

// The archive's bytes with bounds-checked little-endian reads; errors name the file.
class ZipBytes {
 public:
  ZipBytes(std::string bytes, std::string path)
      : bytes_(std::move(bytes)), path_(std::move(path)) {}

  uint64_t size() const { return bytes_.size(); }
  const std::string& path() const { return path_; }
  bool fits(uint64_t at, uint64_t n) const { return at <= size() && n <= size() - at; }
  uint64_t le(uint64_t at, int n) const {
    if (!fits(at, static_cast<uint64_t>(n))) fail("truncated (a record runs past the end)");
    uint64_t v = 0;
    for (int i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes_[at + i]);
    return v;
  }
  std::string text(uint64_t at, uint64_t n) const {
    if (!fits(at, n)) fail("truncated (a name runs past the end)");
    return bytes_.substr(at, n);
  }
  const unsigned char* data(uint64_t at) const {
    return reinterpret_cast<const unsigned char*>(bytes_.data()) + at;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path_ + ": not a readable .npz archive: " + what);
  }

 private:
  std::string bytes_;
  std::string path_;
};

struct Member {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0;
  uint64_t size = 0;
  uint64_t local_offset = 0;
};

struct Directory {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t entries = 0;
};

// The end-of-central-directory record: 22 bytes and a comment of up to 65535 at the end of the
// file. The last signature whose comment ends exactly at the end of the file is the record (a
// signature inside the comment or the data would not). Saturated fields send to the zip64 record.
Directory find_directory(const ZipBytes& z) {
  if (z.size() < 22) z.fail("too short for a zip archive");
  const uint64_t lowest = z.size() > 22 + 65535 ? z.size() - 22 - 65535 : 0;
  for (uint64_t at = z.size() - 22 + 1; at-- > lowest;) {
    if (z.le(at, 4) != kEndRecord || at + 22 + z.le(at + 20, 2) != z.size()) continue;
    Directory d{z.le(at + 16, 4), z.le(at + 12, 4), z.le(at + 10, 2)};
    if (d.offset != kSaturated32 && d.size != kSaturated32 && d.entries != kSaturated16) return d;
    if (at < 20 || z.le(at - 20, 4) != kZip64Locator) z.fail("a zip64 record is missing");
    const uint64_t record = z.le(at - 20 + 8, 8);
    if (z.le(record, 4) != kZip64EndRecord) z.fail("the zip64 end record is not where it says");
    return Directory{z.le(record + 48, 8), z.le(record + 40, 8), z.le(record + 32, 8)};
  }
  z.fail("no end-of-central-directory record (not a zip file)");
}

// Sizes and offsets that did not fit 32 bits are in the entry's zip64 extra field, in this
// order, each present only when its 32-bit field is saturated.
void read_zip64_extra(const ZipBytes& z, uint64_t at, uint64_t length, Member& m) {
  const uint64_t end = at + length;
  while (at + 4 <= end) {
    const uint64_t id = z.le(at, 2), size = z.le(at + 2, 2);
    if (at + 4 + size > end) z.fail("member '" + escaped(m.name) + "': bad extra field");
    if (id == kZip64Extra) {
      uint64_t field = at + 4;
      for (uint64_t* value : {&m.size, &m.compressed, &m.local_offset}) {
        if (*value != kSaturated32) continue;
        if (field + 8 > at + 4 + size)
          z.fail("member '" + escaped(m.name) + "': short zip64 field");
        *value = z.le(field, 8);
        field += 8;
      }
    }
    at += 4 + size;
  }
}

std::vector<Member> read_directory(const ZipBytes& z, const Directory& d) {
  if (!z.fits(d.offset, d.size)) z.fail("the central directory lies outside the file");
  // Each entry takes at least 46 bytes: a count beyond that is damage, not a reason to allocate.
  if (d.entries > d.size / 46) z.fail("the central directory is too small for its entries");
  std::vector<Member> members;
  uint64_t at = d.offset;
  for (uint64_t i = 0; i < d.entries; ++i) {
    if (z.le(at, 4) != kCentralHeader) z.fail("a central directory entry is damaged");
    Member m;
    m.flags = static_cast<uint16_t>(z.le(at + 8, 2));
    m.method = static_cast<uint16_t>(z.le(at + 10, 2));
    m.crc = static_cast<uint32_t>(z.le(at + 16, 4));
    m.compressed = z.le(at + 20, 4);
    m.size = z.le(at + 24, 4);
    const uint64_t name_length = z.le(at + 28, 2), extra = z.le(at + 30, 2);
    const uint64_t comment = z.le(at + 32, 2);
    m.local_offset = z.le(at + 42, 4);
    m.name = z.text(at + 46, name_length);
    read_zip64_extra(z, at + 46 + name_length, extra, m);
    members.push_back(std::move(m));
    at += 46 + name_length + extra + comment;
  }
  return members;
}

// Inflates raw deflate data (zip's method 8) into exactly `size` bytes.
std::string inflate_member(const ZipBytes& z, const Member& m, uint64_t start) {
  const std::string where = "member '" + escaped(m.name) + "'";
  std::string out(m.size, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) z.fail(where + ": zlib could not start inflating");
  uint64_t in_done = 0, out_done = 0;
  int status = Z_OK;
  // avail_in and avail_out are 32-bit: members beyond 4 GiB go through in slices.
  while (status == Z_OK) {
    const uint64_t in_slice = std::min<uint64_t>(m.compressed - in_done, UINT_MAX);
    const uint64_t out_slice = std::min<uint64_t>(m.size - out_done, UINT_MAX);
    zs.next_in = const_cast<Bytef*>(z.data(start + in_done));
    zs.avail_in = static_cast<uInt>(in_slice);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_done);
    zs.avail_out = static_cast<uInt>(out_slice);
    status = inflate(&zs, Z_NO_FLUSH);
    in_done += in_slice - zs.avail_in;
    out_done += out_slice - zs.avail_out;
    if (status == Z_BUF_ERROR && (in_done == m.compressed || out_done == m.size)) break;
    if (status == Z_BUF_ERROR) status = Z_OK;  // a slice ran out; the next one goes on
  }
  inflateEnd(&zs);
  if (status != Z_STREAM_END || out_done != m.size) {
    z.fail(where + ": deflated data is damaged or does not inflate to its recorded " +
           std::to_string(m.size) + " bytes");
  }
  return out;
}

// The bytes of member `m`, inflated and checked against its CRC-32.
std::string member_bytes(const ZipBytes& z, const Member& m) {
  const std::string where = "member '" + escaped(m.name) + "'";
  if (m.flags & 1) z.fail(where + " is encrypted");
  if (z.le(m.local_offset, 4) != kLocalHeader) z.fail(where + ": its local header is damaged");
  const uint64_t start =
      m.local_offset + 30 + z.le(m.local_offset + 26, 2) + z.le(m.local_offset + 28, 2);
  if (!z.fits(start, m.compressed)) z.fail(where + ": its data runs past the end of the file");
  check_memory_limit(static_cast<int64_t>(std::min<uint64_t>(m.size, INT64_MAX)),
                     z.path() + ": " + where);
  std::string bytes;
  if (m.method == 0) {
    if (m.compressed != m.size) z.fail(where + ": stored with differing sizes");
    bytes.assign(reinterpret_cast<const char*>(z.data(start)), m.size);
  } else if (m.method == 8) {
    bytes = inflate_member(z, m, start);
  } else {
    z.fail(where + " is compressed with zip method " + std::to_string(m.method) +
           "; only stored (np.savez) and deflated (np.savez_compressed) members are read");
  }
  const uLong crc =
      crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
  if (crc != m.crc) z.fail(where + ": CRC-32 mismatch (the archive is damaged)");
  return bytes;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> read_npz(const std::string& path) {
  const InputFile in(path, ".npz file", memory_limit());
  const ZipBytes z(in.read_all(), path);
  std::vector<std::pair<std::string, Tensor>> arrays;
  std::set<std::string> seen;
  for (const Member& m : read_directory(z, find_directory(z))) {
    if (!ends_with(m.name, ".npy")) {
      z.fail("member '" + escaped(m.name) + "' is not an .npy array (np.savez names them " +
             "NAME.npy)");
    }
    const std::string name = m.name.substr(0, m.name.size() - 4);
    if (!seen.insert(name).second) z.fail("array '" + escaped(name) + "' is in it twice");
    arrays.emplace_back(name, parse_npy(member_bytes(z, m), path + ": " + escaped(m.name)));
  }
  return arrays;
}

std::map<std::string, Tensor> load_inputs(const Graph& graph, const std::vector<std::string>& specs,
                                          uint64_t seed) {
  auto is_input = [&](const std::string& name) {
    const ValueId id = graph.find_value(name);
    return std::find(graph.inputs.begin(), graph.inputs.end(), id) != graph.inputs.end();
  };
  std::map<std::string, std::string> given_by;  // input name -> the --input that gave it
  auto claim = [&](const std::string& name, const std::string& spec) {
    const auto [earlier, fresh] = given_by.emplace(name, spec);
    if (!fresh) {
      throw Error("--input: input '" + name + "' is given twice (by " + earlier->second + " and " +
                  spec + "); give each input once");
    }
  };
  std::vector<std::string> npy_specs;
  std::map<std::string, Tensor> from_archives;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq != std::string::npos) {
      if (ends_with(spec, ".npz")) {
        throw Error("--input " + spec + ": an .npz holds its arrays by name; give it as --input " +
                    spec.substr(eq + 1));
      }
      claim(spec.substr(0, eq), spec);
      npy_specs.push_back(spec);
      continue;
    }
    if (!ends_with(spec, ".npz")) {
      throw Error("--input expects NAME=FILE.npy or FILE.npz, got '" + spec + "'");
    }
    for (auto& [name, tensor] : read_npz(spec)) {
      if (!is_input(name)) {
        throw Error("--input " + spec + ": array '" + escaped(name) +
                    "' names no input of the model (its inputs: " + graph.input_names() + ")");
      }
      const Value& v = graph.value(graph.find_value(name));
      if (!input_accepts(v, tensor.dtype(), tensor.shape())) {
        throw Error("--input " + spec + ": array '" + name + "' is " + dtype_name(tensor.dtype()) +
                    " " + shape_str(tensor.shape()) + " but input '" + name + "' is " +
                    dtype_name(v.dtype) + " " + open_shape_str(v));
      }
      claim(name, spec);
      from_archives[name] = std::move(tensor);
    }
  }
  for (const std::string& spec : npy_specs) {
    const std::string name = spec.substr(0, spec.find('='));
    if (!from_archives.empty() && !is_input(name)) {
      throw Error("--input " + spec + ": the model has no input named '" + name +
                  "' (its inputs: " + graph.input_names() + ")");
    }
  }
  if (from_archives.empty()) return load_or_generate_inputs(graph, npy_specs, seed);
  // The .npy files and random data go through load_or_generate_inputs for the inputs the
  // archives did not give: a copy of the graph without those inputs (its values and weights
  // are shared, not copied) asks it for exactly the rest, with the same seeded values.
  Graph rest = graph;
  auto drop_given = [&](std::vector<ValueId>& ids) {
    ids.erase(std::remove_if(ids.begin(), ids.end(),
                             [&](ValueId id) { return from_archives.count(graph.value(id).name); }),
              ids.end());
  };
  drop_given(rest.inputs);
  drop_given(rest.value_inputs);
  drop_given(rest.unsized_inputs);
  std::map<std::string, Tensor> inputs = load_or_generate_inputs(rest, npy_specs, seed);
  inputs.insert(from_archives.begin(), from_archives.end());
  return inputs;
}

}  // namespace tessera::cli
