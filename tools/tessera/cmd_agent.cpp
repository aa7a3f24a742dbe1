// `tessera agent --broker HOST:PORT[/POOL]`: one device of a tuning farm. Takes the pool's
// measurement jobs from the Redis server, measures each in a local measuring worker (this
// executable's `tune --worker`, as a local tune does) and answers; see tessera/farm.hpp.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli.hpp"
#include "run_common.hpp"
#include "tessera/error.hpp"
#include "tessera/farm.hpp"

namespace tessera::cli {

namespace {

void print_agent_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tessera agent --broker HOST:PORT[/POOL]|unix:PATH[/POOL] [--name NAME]\n"
               "         [--cache-dir DIR] [--isolation worker|candidate] [--max-jobs N]\n"
               "         [--lease S] [--quiet]\n\n"
               "Serves a tuning farm (`tessera tune --farm ADDR` on the tuner's machine): takes\n"
               "the pool's candidates from the Redis server, measures each on this device in a\n"
               "measuring worker, answers, and keeps a heartbeat so that the tuner hands the\n"
               "candidate of a killed agent to another. Stops on SIGINT or SIGTERM after the\n"
               "candidate it is measuring, or after --max-jobs candidates.\n\n"
               "Defaults: the pool 'default'; --name <hostname>-<pid> (one per agent of a pool;\n"
               "a restarted agent of the same name first hands back what it held); --cache-dir\n"
               "<cache>/farm (models received, kernels); --isolation worker; --max-jobs 0\n"
               "(no limit); --lease 10 s (heartbeat lifetime, 0.2..3600).\n");
}

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) {
  g_stop = true;
}

}  // namespace

int cmd_agent(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      print_agent_usage(stdout);
      return 0;
    }
  }
  Args args(argc, argv, {"broker", "name", "cache-dir", "isolation", "max-jobs", "lease"},
            {"quiet"});
  if (!args.positionals().empty() || args.get("broker").empty()) {
    print_agent_usage(stderr);
    return 2;
  }
  tune::AgentOptions options;
  options.broker = tune::BrokerAddress::parse(args.get("broker"));
  options.name = args.get("name");
  options.cache_dir =
      args.get("cache-dir", (std::filesystem::path(default_cache_dir()) / "farm").string());
  const std::string isolation = args.get("isolation", "worker");
  if (isolation != "worker" && isolation != "candidate") {
    throw Error("--isolation: '" + isolation + "' is not worker or candidate");
  }
  options.persistent_worker = isolation == "worker";
  options.max_jobs = static_cast<int>(args.get_int("max-jobs", 0, 0, 1000000000));
  options.lease_s = args.get_number("lease", 10, 0.2, 3600);
  options.worker_command = {this_executable(), "tune", "--worker"};
  options.stop = &g_stop;
  if (!args.flag("quiet")) {
    options.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  }
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  const int answered = tune::serve_farm_agent(options);
  std::fprintf(stderr, "agent: %d candidate(s) measured\n", answered);
  return 0;
}

}  // namespace tessera::cli
