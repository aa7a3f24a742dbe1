// The tuning farm: one tuner, many measuring devices, a Redis server between them.
//
// The tuner (FarmClient) pushes each candidate's measurement request onto the pool's job list;
// agents (serve_farm_agent, `tessera agent`), one per device, take jobs with an atomic move onto
// their own processing list, measure them in their local measuring worker (the same child as a
// local tune: fresh one-node region, timed, checked against the reference kernel) and push the
// result onto the reply list the job names. Models travel through the server once per content:
// the tuner stores the file's bytes under a key made of its size and hash, an agent writes them
// into its cache directory the first time a job names them.
//
// Crash-proof: an agent holds a heartbeat key that expires unless refreshed (a thread refreshes it
// while a measurement runs). The tuner, while it waits, moves the processing list of every agent
// whose heartbeat has expired back onto the job list, so a killed agent's job is measured by
// another (or by the same one, restarted: a new agent first hands back what its name still holds).
// A job handed back more than kMaxLosses times is answered "crash" (it may be what kills agents).
// Results carry the job's id, so a late answer of a job measured twice is dropped. Resumable:
// results go to the tuner's log as in a local run, so `tune --resume` continues after the tuner
// itself was stopped.
//
// Keys, under "tessera:farm:<pool>:": jobs (list), processing:<agent> (list), agents (set),
// heartbeat:<agent> (string with expiry), model:<size>-<hash> (string), reply:<run> (list). A job
// is "<id>\t<reply list>\t<model key>\t<worker protocol request line>", a reply
// "<id>\t<worker protocol result line>". The server is trusted (no authentication or TLS here):
// run it on the farm's own network.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/tuner.hpp"

namespace tessera::tune {

// "HOST:PORT[/POOL]" or "unix:PATH[/POOL]" (the pool defaults to "default"; a pool is a set of
// devices of one kind, measured as one).
struct BrokerAddress {
  std::string host;  // empty for a unix socket
  int port = 0;
  std::string socket_path;
  std::string pool = "default";
  // Throws tessera::Error naming the text and what is wrong with it.
  static BrokerAddress parse(const std::string& text);
  std::string text() const;  // as parsed, for messages
};

// A job lost this many times (its agent died while holding it) is answered "crash".
inline constexpr int kMaxFarmLosses = 3;

class RedisConnection;

// The tuner's side. Not thread-safe: one tuner thread uses it.
class FarmClient {
 public:
  // Connects (throws tessera::Error naming the address when the server cannot be reached).
  // agent_wait_s: how long measure() waits while jobs are pending and no agent is alive before it
  // gives up with an error.
  explicit FarmClient(const BrokerAddress& broker, double agent_wait_s = 60);
  ~FarmClient();
  FarmClient(const FarmClient&) = delete;
  FarmClient& operator=(const FarmClient&) = delete;

  // Agents whose heartbeat is alive now.
  int agents_alive();
  // Measures the requests on the farm's agents at once; result i belongs to request i. Each
  // request's model file is uploaded once per content. Throws tessera::Error when no agent has
  // been alive for agent_wait_s while jobs were pending, or when the server fails.
  std::vector<MeasureResult> measure(const std::vector<MeasureRequest>& requests);
  // Jobs handed back from dead agents so far (for the log and tests).
  int jobs_recovered() const { return recovered_; }

 private:
  std::string upload_model(const std::string& path);
  BrokerAddress broker_;
  std::unique_ptr<RedisConnection> redis_;
  double agent_wait_s_;
  std::string run_id_;
  uint64_t next_job_ = 0;
  int recovered_ = 0;
  std::vector<std::string> uploaded_;  // model keys this client stored
};

struct AgentOptions {
  BrokerAddress broker;
  std::string name;  // unique per agent in the pool; "" = "<hostname>-<pid>"
  WorkerCommand worker_command;
  bool persistent_worker = true;  // as TuneOptions::isolation "worker" (else one per candidate)
  std::string cache_dir;          // models received are kept here (created when missing)
  double lease_s = 10;            // heartbeat lifetime; refreshed every lease_s / 3
  int max_jobs = 0;               // stop after this many (0 = serve until stop is set)
  const std::atomic<bool>* stop = nullptr;      // checked between jobs (and every second)
  std::function<void(const std::string&)> log;  // one line per job and event
};

// Serves jobs until options.stop is set or max_jobs were answered. Returns the jobs answered.
// Throws tessera::Error when the server cannot be reached or fails.
int serve_farm_agent(const AgentOptions& options);

}  // namespace tessera::tune
