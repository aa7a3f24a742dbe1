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
#include "tessera/session.hpp"  // parse_target_entries

namespace tessera::cli {

namespace {

void print_agent_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tessera agent --broker redis://HOST:PORT [--key KEY] [--targets LIST]\n"
               "         [--name NAME] [--cache-dir DIR] [--isolation worker|candidate]\n"
               "         [--max-jobs N] [--lease S] [--quarantine-after N] [--quiet]\n\n"
               "Serves a tuning farm (`tessera tune --farm URL --key KEY` on the tuner's\n"
               "machine): takes pool KEY's candidates from the Redis server, measures each on\n"
               "this device in a measuring worker (as a local tune does), answers, and keeps a\n"
               "heartbeat so that the tuner hands the candidate of a killed agent to another.\n"
               "A job that is malformed, too large, for a plugin not in --targets, or whose\n"
               "model on the server is not what its key says is refused with the reason; one\n"
               "that cannot be answered (its reply key is not this pool's or holds another\n"
               "type), or that stopped agents twice, goes to the pool's dead letters (`tessera\n"
               "farm status` shows them); no job ends the agent. Control characters in what it\n"
               "logs are escaped. Reconnects when the server restarts. Stops on SIGINT or\n"
               "SIGTERM after the candidate it is measuring, after --max-jobs candidates, or\n"
               "when quarantined (--quarantine-after crashes or timeouts in a row).\n"
               "The broker may also be written redis://[[USER]:PASSWORD@]HOST:PORT/KEY,\n"
               "HOST:PORT/KEY or unix:PATH/KEY; the password may come from\n"
               "TESSERA_FARM_PASSWORD and is never printed.\n\n"
               "Defaults: --key from the first target's device name (\"mali-g78-r38p1\") when\n"
               "--targets is given, else 'default'; --targets none (any job's target; nothing\n"
               "probed at start); --name <hostname>-<pid> (a restarted agent of the same name\n"
               "first hands back what it held); --cache-dir <cache>/farm; --isolation worker;\n"
               "--max-jobs 0 (no limit); --lease 10 s (heartbeat lifetime, 0.2..3600);\n"
               "--quarantine-after 10 (0 = never).\n");
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
  Args args(argc, argv,
            {"broker", "key", "targets", "name", "cache-dir", "isolation", "max-jobs", "lease",
             "quarantine-after"},
            {"quiet"});
  if (!args.positionals().empty() || args.get("broker").empty()) {
    print_agent_usage(stderr);
    return 2;
  }
  tune::AgentOptions options;
  options.broker = tune::BrokerAddress::parse(args.get("broker"));
  if (args.has("key")) {
    if (const std::string why = tune::farm_key_problem(args.get("key")); !why.empty()) {
      throw Error("--key: " + why);
    }
    options.broker.pool = args.get("key");
  }
  for (const TargetListEntry& e : parse_target_entries(args.get("targets"))) {
    options.targets.push_back(e.spec);
  }
  // A key written in the address or --key wins; else the device names it.
  options.key_from_device =
      !options.targets.empty() && !args.has("key") && !options.broker.pool_given;
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
  options.quarantine_after = static_cast<int>(args.get_int("quarantine-after", 10, 0, 1000000));
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
