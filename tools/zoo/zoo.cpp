// The zoo's name table, serialization with the ONNX checker as a gate, and atomic file writing.
#include "zoo.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <system_error>
#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>

#include "networks.hpp"
#include "tessera/error.hpp"

namespace tessera::zoo {
namespace {

using detail::ModelBuilder;

const std::vector<std::pair<std::string, std::function<void(ModelBuilder&, int64_t)>>>&
network_table() {
  static const std::vector<std::pair<std::string, std::function<void(ModelBuilder&, int64_t)>>>
      table = {
          {"resnet-18", [](ModelBuilder& b, int64_t n) { detail::build_resnet(b, n, 18); }},
          {"resnet-34", [](ModelBuilder& b, int64_t n) { detail::build_resnet(b, n, 34); }},
          {"resnet-50", [](ModelBuilder& b, int64_t n) { detail::build_resnet(b, n, 50); }},
          {"mobilenet", detail::build_mobilenet},
          {"mobilenet_v2", detail::build_mobilenet_v2},
          {"squeezenet_v1.1", detail::build_squeezenet_v1_1},
          {"vgg-16", detail::build_vgg16},
          {"inception_v3", detail::build_inception_v3},
      };
  return table;
}

std::string joined_names() {
  std::string names;
  for (const std::string& name : zoo_names()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

std::vector<std::string> zoo_names() {
  std::vector<std::string> names;
  for (const auto& entry : network_table()) names.push_back(entry.first);
  return names;
}

std::string build_zoo_model(const std::string& name, const ZooOptions& options) {
  const auto& table = network_table();
  auto it = table.begin();
  while (it != table.end() && it->first != name) ++it;
  if (it == table.end()) {
    throw Error("zoo: unknown network '" + name + "'; known networks: " + joined_names());
  }
  if (options.batch < 1) {
    throw Error("zoo: batch must be at least 1 (got " + std::to_string(options.batch) + ")");
  }
  std::string bytes;
  {
    ModelBuilder builder(name, options.seed);
    it->second(builder, options.batch);
    try {
      onnx::checker::check_model(builder.model());
    } catch (const std::exception& e) {
      // A builder bug, never a user error; say so plainly.
      throw Error("zoo: internal error: network '" + name +
                  "' was rejected by the ONNX checker: " + e.what());
    }
    // Deterministic serialization: same seed, same bytes (no map fields today, but this keeps
    // the promise if some are ever added).
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!builder.model().SerializeToCodedStream(&coded)) {
      throw Error("zoo: could not serialize network '" + name + "' (larger than 2 GB?)");
    }
  }
  return bytes;
}

void write_zoo_model(const std::string& name, const ZooOptions& options, const std::string& path,
                     bool overwrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!overwrite && fs::exists(path, ec)) {
    throw Error("zoo: '" + path + "' already exists; choose another path or allow overwriting");
  }
  const std::string bytes = build_zoo_model(name, options);
  // Temporary file in the same directory so the rename is atomic on the same file system.
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("zoo: cannot create '" + temp + "' to write network '" + name + "'");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      throw Error("zoo: writing '" + temp + "' failed (disk full?)");
    }
  }
  if (!overwrite && fs::exists(path, ec)) {
    // Someone created it while we were building; do not clobber it.
    fs::remove(temp, ec);
    throw Error("zoo: '" + path + "' appeared while writing; not overwriting it");
  }
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw Error("zoo: cannot move '" + temp + "' to '" + path + "': " + ec.message());
  }
}

}  // namespace tessera::zoo
