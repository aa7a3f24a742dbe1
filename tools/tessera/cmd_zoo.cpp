// `tessera zoo NAME -o FILE.onnx [--batch N] [--seed S] [--force]`
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "zoo.hpp"

namespace tessera::cli {

int cmd_zoo(int argc, char** argv) {
  Args args(argc, argv, {"output", "batch", "seed"}, {"force", "help", "list"});
  if (args.flag("help") || args.flag("list") || args.positionals().size() != 1) {
    std::string usage =
        "usage: tessera zoo NAME -o FILE.onnx [--batch N] [--seed S] [--force]\nnetworks:";
    for (const std::string& name : zoo::zoo_names()) usage += " " + name;
    return print_usage(usage + "\n", args.flag("help") || args.flag("list"));
  }
  const std::string name = args.positionals()[0];
  const std::string output = args.get("output", name + ".onnx");
  zoo::ZooOptions options;
  options.batch = args.get_int("batch", 1, 1, 4096);
  options.seed = static_cast<uint64_t>(args.get_int("seed", 0, 0, INT64_MAX));
  if (options.batch < 1) throw Error("--batch must be at least 1");
  zoo::write_zoo_model(name, options, output, args.flag("force"));
  std::printf("wrote %s (batch %lld, seed %llu) to %s\n", name.c_str(),
              static_cast<long long>(options.batch),
              static_cast<unsigned long long>(options.seed), output.c_str());
  return 0;
}

}  // namespace tessera::cli
