// `tessera`: the command line. Each subcommand lives in its own cmd_<name>.cpp.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"run", tessera::cli::cmd_run, "run a model: outputs to .npy, latency, top-5, placement"},
    {"bench", tessera::cli::cmd_bench, "latency statistics and peak memory (--json for scripts)"},
    {"plan", tessera::cli::cmd_plan, "show which plugin runs each node and why"},
    {"compile", tessera::cli::cmd_compile, "compile a model for its targets into a package"},
    {"info", tessera::cli::cmd_info, "version, plugins, devices, refusals"},
    {"zoo", tessera::cli::cmd_zoo, "write a zoo network (resnet-18, mobilenet_v2, ...) as ONNX"},
    {"pack", tessera::cli::cmd_pack, "inspect, validate or merge tuned-config packs"},
    {"tune", tessera::cli::cmd_tune, "tune schedules of a model's nodes and write a pack"},
    {"agent", tessera::cli::cmd_agent, "measure a tuning farm's candidates on this device"},
    {"farm", tessera::cli::cmd_farm, "a tuning farm's pools and agents (farm status)"},
    {"keygen", tessera::cli::cmd_keygen, "write an ed25519 key pair for signing"},
    {"sign", tessera::cli::cmd_sign, "sign packages and packs with a secret key"},
    {"verify", tessera::cli::cmd_verify, "check content hashes and signatures"},
};

// The overview: on stdout for --help, on stderr when the command line was wrong.
void print_usage(std::FILE* out) {
  std::fprintf(out, "tessera %s: run neural networks on heterogeneous targets\n\n",
               TESSERA_VERSION);
  std::fprintf(out, "usage: tessera <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-8s %s\n", c.name, c.summary);
  std::fprintf(out, "\n`tessera <command> --help` shows a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_usage(stdout);
    return 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("tessera %s\n", TESSERA_VERSION);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const std::exception& e) {
      return tessera::cli::report_error(c.name, e.what());
    }
  }
  std::fprintf(stderr, "tessera: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return 2;
}
