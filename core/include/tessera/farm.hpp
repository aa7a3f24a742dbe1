// The tuning farm: one tuner, many measuring devices, a Redis server between them.
//
// The tuner (FarmClient) adds each candidate's measurement request to the pool's job stream;
// agents (serve_farm_agent, `tessera agent`), one per device, read the stream in one consumer
// group (XREADGROUP), so each job goes to one agent and stays on that agent's pending list until
// it acknowledges it; the agent measures it in its local measuring worker (the same child as a
// local tune: fresh one-node region, timed, checked against the reference kernel), pushes the
// result onto the reply list the job names, then acknowledges and deletes the entry. Models travel
// through the server once per content: the tuner stores the file's bytes under a key made of its
// size and hash, an agent writes them into its cache directory the first time a job names them.
//
// Crash-proof: an agent holds a heartbeat key that expires unless refreshed (a thread refreshes it
// while a measurement runs). The tuner, while it waits, claims (XCLAIM) the pending jobs of every
// agent whose heartbeat has expired and adds them to the stream again, so a killed agent's job is
// measured by another (or by the same one, restarted: a new agent first hands back what its name
// still holds). Unlike XAUTOCLAIM's idle time, the heartbeat tells a dead agent from one in a long
// measurement. Each hand-back counts against the job (a set under its content hash, which
// survives the job being queued again as a new entry): a job that stopped agents kMaxFarmLosses
// times may be what kills them, so it goes to the pool's dead letters instead and is answered
// "crash". Results carry the job's id, so a late answer of a job measured twice is dropped.
// A server that restarted without persistence lost the stream: the tuner and the agents make the
// stream and group again, and the tuner adds what is still unanswered. Resumable: results go to
// the tuner's log as in a local run, so `tune --resume` continues after the tuner itself was
// stopped.
//
// Untrusted input: agents treat every job field and every value the server returns as untrusted.
// A job that fails a check, or whose model key holds something else than its model, is answered
// "refused" with the reason; a job that cannot be answered (no reply key of this pool's form, or
// a reply key holding another type) goes to the dead letters with the reason. Either way it is
// acknowledged, so it never comes back, and the agent goes on serving.
//
// Keys, under "tessera:farm:<pool>:": jobs (stream, consumer group "agents", each entry one field
// "job"), agents (set), agent:<name> (hash: its registration), heartbeat:<agent> (string with
// expiry), model:<size>-<hash> (string), reply:<run> (list), lost:<job hash> (set: the stream
// entries of the job that agents stopped holding), dead (stream of dead letters: fields job,
// reason, agent). A job is "<id>\t<reply list>\t<model key>\t<worker protocol request line>",
// its reply list one of this pool's reply:<run> keys; a reply "<id>\t<worker protocol result
// line>". The server may require a password (Redis AUTH / ACL users); there is no TLS (Debian 12's
// hiredis 0.14 has none): run the server on the farm's own network.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/tuner.hpp"

namespace tessera::tune {

// The server and the pool ("key": one kind of device, measured as one). Written
// "redis://[[USER]:PASSWORD@]HOST:PORT[/KEY]", "HOST:PORT[/KEY]" or "unix:PATH[/KEY]"; the key
// defaults to "default". Without a password in the URL, TESSERA_FARM_PASSWORD is used when set
// (Redis AUTH; with USER, an ACL user). The password is never printed: text() leaves it out.
struct BrokerAddress {
  std::string host;  // empty for a unix socket
  int port = 0;
  std::string socket_path;
  std::string pool = "default";
  bool pool_given = false;  // the text named the key
  std::string user, password;
  // Throws tessera::Error naming the text (its password masked) and what is wrong with it.
  static BrokerAddress parse(const std::string& text);
  std::string text() const;  // for messages: no password
};

// A key name's problem ("" when fine): letters, digits and - _ . only, 1..100 of them.
std::string farm_key_problem(const std::string& key);
// The pool agents of a device join when no key is given: "Mali-G78 r38p1" -> "mali-g78-r38p1"
// ("" when the name holds no letter or digit).
std::string farm_key_from_device(const std::string& device_name);

// A job held by agents that stopped this many times (each died or was killed while holding it) is
// moved to the pool's dead letters and answered "crash".
inline constexpr int kMaxFarmLosses = 2;
// The dead letters a pool keeps (the oldest go first), and the bytes of each job kept with one.
inline constexpr int kMaxFarmDeadLetters = 1000;
inline constexpr size_t kMaxDeadLetterJobBytes = 4096;
// How long the tuner and the agents try to reach a server that went away before they give up.
inline constexpr double kFarmReconnectS = 30;
// The most bytes one job may carry (the worker protocol line of one candidate is far smaller).
inline constexpr size_t kMaxFarmJobBytes = 64 * 1024;

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
  // Times the connection to the server was made again (the server restarted or the network cut).
  int reconnects() const { return reconnects_; }

 private:
  std::string upload_model(const std::string& path);
  void reconnect();  // retries for up to kFarmReconnectS, then throws tessera::Error
  BrokerAddress broker_;
  std::unique_ptr<RedisConnection> redis_;
  double agent_wait_s_;
  int reconnects_ = 0;
  std::string run_id_;
  uint64_t next_job_ = 0;
  int recovered_ = 0;
  // Each model file's content key, computed once (the file is read and hashed only then), and
  // whether this client stored it on the server since it last connected.
  struct ModelKey {
    std::string key;
    bool uploaded = false;
  };
  std::map<std::string, ModelKey> models_;  // by path
};

struct AgentOptions {
  BrokerAddress broker;
  std::string name;  // unique per agent in the pool; "" = "<hostname>-<pid>"
  // Targets this agent measures ("mali:any"): probed at start, named in its registration; a job
  // for another plugin is refused. Empty = any target of the jobs (no probe at start).
  std::vector<std::string> targets;
  // With no pool in the broker address: the key is made from the first target's device name
  // ("mali-g78-r38p1"), so that agents of one kind of device meet in one pool.
  bool key_from_device = false;
  WorkerCommand worker_command;
  bool persistent_worker = true;  // as TuneOptions::isolation "worker" (else one per candidate)
  std::string cache_dir;          // models received are kept here (created when missing)
  double lease_s = 10;            // heartbeat lifetime; refreshed every lease_s / 3
  int max_jobs = 0;               // stop after this many (0 = serve until stop is set)
  // After this many candidates in a row whose measuring worker died or hung (an outcome the
  // worker did not report), the agent quarantines itself: it leaves the queue, says why in its
  // registration (`tessera farm status` shows it) and returns (0 = never).
  int quarantine_after = 10;
  const std::atomic<bool>* stop = nullptr;      // checked between jobs (and every second)
  std::function<void(const std::string&)> log;  // one line per job and event
};

// Serves jobs until options.stop is set, max_jobs were answered or it quarantined itself. Returns
// the jobs answered (not those moved to the dead letters). Throws tessera::Error when the server
// cannot be reached for kFarmReconnectS, or fails while the agent starts (its worker, its probe,
// its registration); no job's content ends it.
int serve_farm_agent(const AgentOptions& options);

// What `tessera farm status` shows: the pool's agents as they registered, and its dead letters.
// Every string is as the server holds it (untrusted): escape it before printing.
struct FarmAgentStatus {
  std::string name, device, driver, engine, targets;
  std::string plugins;           // "cpu 0.1.0, mali 0.3.0": each target's plugin and its version
  bool alive = false;            // heartbeat present
  double last_seen_s = -1;       // seconds since the agent last wrote its registration
  int64_t done = 0, failed = 0;  // results answered, of which not "ok"
  std::string quarantined;       // why, or ""
};
// A job that was never measured: it stopped agents kMaxFarmLosses times or could not be answered.
struct FarmDeadLetter {
  std::string id;      // its entry in the dead-letter stream ("<unix ms>-<n>": when it was moved)
  double age_s = -1;   // seconds since it was moved
  std::string agent;   // the agent or tuner that moved it
  std::string reason;  // why
  std::string job;     // the job as queued (at most kMaxDeadLetterJobBytes of it)
};
struct FarmStatus {
  std::string broker;  // BrokerAddress::text()
  int64_t queued = 0;  // jobs waiting
  std::vector<FarmAgentStatus> agents;
  int64_t dead_letters = 0;             // all the pool keeps
  std::vector<FarmDeadLetter> dead;     // the newest first, at most 20
  std::vector<std::string> unreadable;  // keys holding something else than the farm wrote, why
};
FarmStatus farm_status(const BrokerAddress& broker);
// The pools ("keys") that have agents, jobs or dead letters on the server.
std::vector<std::string> farm_pools(const BrokerAddress& broker);

// The pool a tuner sends to when neither its options nor the address name one: the pool agents
// of the device it tunes for join (`device_pool`, farm_key_from_device of that device's name) when
// an agent is alive there; else the one pool whose live agents measure every plugin of
// `plugins`; with no live agent on the server, `device_pool` (agents started later on that device
// join it). *why says which rule chose. Throws tessera::Error naming the live pools, their devices
// and targets, when several or none of them fit.
std::string choose_farm_pool(const BrokerAddress& broker, const std::string& device_pool,
                             const std::vector<std::string>& plugins, std::string* why);

}  // namespace tessera::tune
