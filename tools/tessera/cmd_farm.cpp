// `tessera farm status --broker URL [--key KEY] [--json]`: a tuning farm's pools as the server
// holds them: per agent its device, driver, engine, last registration, results answered and
// failed, and why it is quarantined; the jobs waiting and the dead letters per pool. Every string
// comes from the server, where anyone with its password writes: control characters are escaped.
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "tessera/error.hpp"
#include "tessera/farm.hpp"

namespace tessera::cli {

namespace {

void print_farm_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tessera farm status --broker redis://HOST:PORT [--key KEY] [--json]\n\n"
               "Shows a tuning farm: for each pool (KEY, or every pool on the server) the jobs\n"
               "waiting and each agent with its device, driver, engine and plugin versions,\n"
               "whether its heartbeat is alive, seconds since it last reported, candidates\n"
               "answered and failed, and why it is quarantined; the pool's dead letters (jobs\n"
               "that stopped agents twice or could not be answered), the newest first, with\n"
               "the reason. --json prints one object.\n");
}

// A string from the server, for a terminal: control characters escaped, at most `limit` bytes.
std::string shown(const std::string& text, size_t limit = 200) {
  return escaped(text.size() > limit ? text.substr(0, limit) + "..." : text);
}

std::string agent_json(const tune::FarmAgentStatus& a) {
  return "{\"name\": " + json_string(a.name) + ", \"device\": " + json_string(a.device) +
         ", \"driver\": " + json_string(a.driver) + ", \"engine\": " + json_string(a.engine) +
         ", \"targets\": " + json_string(a.targets) + ", \"plugins\": " + json_string(a.plugins) +
         ", \"alive\": " + (a.alive ? "true" : "false") +
         ", \"last_seen_s\": " + json_number(a.last_seen_s) +
         ", \"done\": " + std::to_string(a.done) + ", \"failed\": " + std::to_string(a.failed) +
         ", \"quarantined\": " + json_string(a.quarantined) + "}";
}

std::string dead_letter_json(const tune::FarmDeadLetter& d) {
  return "{\"id\": " + json_string(d.id) + ", \"age_s\": " + json_number(d.age_s) +
         ", \"agent\": " + json_string(d.agent) + ", \"reason\": " + json_string(d.reason) +
         ", \"job\": " + json_string(d.job) + "}";
}

std::string pool_json(const std::string& pool, const tune::FarmStatus& status) {
  std::string agents, dead;
  for (const tune::FarmAgentStatus& a : status.agents) {
    agents += (agents.empty() ? "" : ", ") + agent_json(a);
  }
  for (const tune::FarmDeadLetter& d : status.dead) {
    dead += (dead.empty() ? "" : ", ") + dead_letter_json(d);
  }
  return "{\"key\": " + json_string(pool) + ", \"broker\": " + json_string(status.broker) +
         ", \"queued\": " + std::to_string(status.queued) + ", \"agents\": [" + agents +
         "], \"dead_letters\": " + std::to_string(status.dead_letters) + ", \"dead\": [" + dead +
         "], \"unreadable\": " + json_string_list(status.unreadable) + "}";
}

void print_pool(const tune::FarmStatus& status) {
  std::printf("pool %s: %lld job(s) waiting, %zu agent(s), %lld dead letter(s)\n",
              shown(status.broker).c_str(), static_cast<long long>(status.queued),
              status.agents.size(), static_cast<long long>(status.dead_letters));
  for (const tune::FarmAgentStatus& a : status.agents) {
    std::printf(
        "  %-20s %-5s %-30s driver %s, engine %s, plugins %s, seen %.0f s ago, %lld done, %lld "
        "failed%s\n",
        shown(a.name).c_str(), a.alive ? "alive" : "gone",
        a.device.empty() ? "(device not probed)" : shown(a.device).c_str(), shown(a.driver).c_str(),
        shown(a.engine).c_str(), a.plugins.empty() ? "-" : shown(a.plugins).c_str(), a.last_seen_s,
        static_cast<long long>(a.done), static_cast<long long>(a.failed),
        a.quarantined.empty() ? "" : (", QUARANTINED: " + shown(a.quarantined, 400)).c_str());
  }
  for (const tune::FarmDeadLetter& d : status.dead) {
    std::printf("  dead letter %s (%.0f s ago, moved by %s): %s\n    job: %s\n",
                shown(d.id).c_str(), d.age_s, shown(d.agent).c_str(), shown(d.reason, 400).c_str(),
                shown(d.job, 160).c_str());
  }
  for (const std::string& u : status.unreadable) {
    std::printf("  unreadable: %s\n", shown(u, 400).c_str());
  }
}

}  // namespace

int cmd_farm(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      print_farm_usage(stdout);
      return 0;
    }
  }
  Args args(argc, argv, {"broker", "key"}, {"json"});
  if (args.positionals() != std::vector<std::string>{"status"} || args.get("broker").empty()) {
    print_farm_usage(stderr);
    return 2;
  }
  tune::BrokerAddress broker = tune::BrokerAddress::parse(args.get("broker"));
  std::vector<std::string> pools;
  if (args.has("key")) {
    if (const std::string why = tune::farm_key_problem(args.get("key")); !why.empty()) {
      throw Error("--key: " + why);
    }
    pools = {args.get("key")};
  } else if (broker.pool_given) {
    pools = {broker.pool};
  } else {
    pools = tune::farm_pools(broker);
  }
  std::string json;
  for (const std::string& pool : pools) {
    broker.pool = pool;
    const tune::FarmStatus status = tune::farm_status(broker);
    if (args.flag("json")) {
      json += std::string(json.empty() ? "" : ", ") + pool_json(pool, status);
    } else {
      print_pool(status);
    }
  }
  if (args.flag("json")) std::printf("{\"pools\": [%s]}\n", json.c_str());
  if (pools.empty() && !args.flag("json"))
    std::printf("no pool on %s\n", shown(broker.text()).c_str());  // never the password
  return 0;
}

}  // namespace tessera::cli
