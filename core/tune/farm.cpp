// The tuning farm over Redis (hiredis): the tuner's FarmClient and the agent loop. The protocol,
// the keys and the recovery rules are described in tessera/farm.hpp.
#include "tessera/farm.hpp"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "targets.hpp"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/pack.hpp"  // engine_version
#include "tessera/plugin_host.hpp"

namespace tessera::tune {

namespace {

constexpr int64_t kMaxModelBytes = int64_t{2} << 30;  // what one model may carry through the server
constexpr int kModelTtlS = 7 * 24 * 3600;             // models not used for a week are dropped
constexpr int kReplyTtlS = 24 * 3600;                 // replies of a tuner that went away

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// The content key of a model: its size and 64-bit FNV-1a hash. It names a file within one trusted
// pool (the server is not a security boundary); the size makes an accidental collision need two
// files of the same length.
std::string content_key(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016" PRIx64, h);
  return std::to_string(bytes.size()) + "-" + hex;
}

// "<a>\t<b>\t<c>\t<rest>" split into `n` tab-separated fields, the last one taking the rest (the
// worker protocol's lines contain tabs themselves).
std::vector<std::string> split_fields(const std::string& text, size_t n) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (out.size() + 1 < n) {
    const size_t tab = text.find('\t', pos);
    if (tab == std::string::npos) return {};
    out.push_back(text.substr(pos, tab - pos));
    pos = tab + 1;
  }
  out.push_back(text.substr(pos));
  return out;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == 0) return "agent";
  return buf;
}

}  // namespace

std::string farm_key_problem(const std::string& key) {
  if (key.empty()) return "an empty key";
  if (key.size() > 100) return "a key of more than 100 characters";
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return "key '" + escaped(key) + "' holds other characters than letters, digits and - _ .";
    }
  }
  return "";
}

BrokerAddress BrokerAddress::parse(const std::string& text) {
  BrokerAddress a;
  std::string rest = text;
  std::string shown = text;  // the text with its password masked, for errors
  auto bad = [&](const std::string& why) {
    return Error("farm broker '" + escaped(shown) + "': " + why +
                 " (expected redis://[[USER]:PASSWORD@]HOST:PORT[/KEY], HOST:PORT[/KEY] or "
                 "unix:PATH[/KEY])");
  };
  if (const size_t scheme_end = rest.find("://"); scheme_end != std::string::npos) {
    const std::string scheme = rest.substr(0, scheme_end);
    rest = rest.substr(scheme_end + 3);
    const size_t at = rest.rfind('@');
    if (at != std::string::npos) {
      const std::string auth = rest.substr(0, at);
      const size_t colon = auth.find(':');
      shown = scheme + "://" +
              (colon == std::string::npos ? "***" : auth.substr(0, colon) + ":***") + "@" +
              rest.substr(at + 1);
      if (colon == std::string::npos) throw bad("credentials without ':' before the password");
      a.user = auth.substr(0, colon);
      a.password = auth.substr(colon + 1);
      rest = rest.substr(at + 1);
    }
    // hiredis before 1.0 (Debian 12 ships 0.14) has no TLS: say so rather than failing on the
    // address, and name what works instead.
    if (scheme == "rediss") {
      throw bad(
          "TLS (rediss://) is not available: this build's hiredis has no TLS support; keep the "
          "server on the farm's own network, or reach it through a TLS tunnel (stunnel, ssh -L) "
          "and give the tunnel's local end as redis://");
    }
    if (scheme != "redis") throw bad("unknown scheme '" + escaped(scheme) + "://'");
  }
  if (rest.rfind("unix:", 0) == 0) {
    rest = rest.substr(5);
    // unix:/run/redis.sock/key: the key is what follows the last '/' after ".sock".
    const size_t sock = rest.find(".sock");
    const size_t slash = rest.find('/', sock == std::string::npos ? 0 : sock);
    if (sock != std::string::npos && slash != std::string::npos) {
      a.pool = rest.substr(slash + 1);
      a.pool_given = true;
      rest = rest.substr(0, slash);
    }
    if (rest.empty() || rest[0] != '/') throw bad("the socket path must be absolute");
    a.socket_path = rest;
  } else {
    const size_t slash = rest.find('/');
    if (slash != std::string::npos) {
      a.pool = rest.substr(slash + 1);
      a.pool_given = true;
      rest = rest.substr(0, slash);
    }
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0) throw bad("no host and port");
    const std::string port = rest.substr(colon + 1);
    if (!all_digits(port) || port.size() > 5 || std::stoi(port) < 1 || std::stoi(port) > 65535) {
      throw bad("port '" + escaped(port) + "' is not a number in 1..65535");
    }
    a.host = rest.substr(0, colon);
    a.port = std::stoi(port);
  }
  if (const std::string why = farm_key_problem(a.pool); !why.empty()) throw bad(why);
  if (a.password.empty()) {
    if (const char* env = std::getenv("TESSERA_FARM_PASSWORD"); env && *env) a.password = env;
  }
  return a;
}

std::string BrokerAddress::text() const {
  return (socket_path.empty() ? "redis://" + host + ":" + std::to_string(port)
                              : "unix:" + socket_path) +
         "/" + pool;
}

// The server went away or the connection broke (as opposed to an error reply): worth reconnecting.
class BrokerLost : public Error {
 public:
  using Error::Error;
};

// One hiredis connection; every failure is a tessera::Error naming the server and the command.
class RedisConnection {
 public:
  struct Reply {
    bool nil = true;
    std::string str;
    long long integer = 0;
    std::vector<std::string> elements;  // of an array reply (nil elements as "")
    std::vector<Reply> items;           // the same elements, whole (stream replies nest arrays)
  };

  explicit RedisConnection(const BrokerAddress& broker) : where_(broker.text()) {
    const timeval connect_timeout{5, 0};
    ctx_ = broker.socket_path.empty()
               ? redisConnectWithTimeout(broker.host.c_str(), broker.port, connect_timeout)
               : redisConnectUnixWithTimeout(broker.socket_path.c_str(), connect_timeout);
    if (ctx_ == nullptr || ctx_->err) {
      const std::string why = ctx_ ? ctx_->errstr : "out of memory";
      if (ctx_) redisFree(ctx_);
      ctx_ = nullptr;
      throw BrokerLost("farm broker " + where_ + ": cannot connect: " + why);
    }
    // Blocking commands wait at most a second; a server that answers nothing for longer than
    // this is treated as gone.
    const timeval io_timeout{30, 0};
    redisSetTimeout(ctx_, io_timeout);
    if (!broker.password.empty()) {
      std::vector<std::string> auth = {"AUTH"};
      if (!broker.user.empty()) auth.push_back(broker.user);
      auth.push_back(broker.password);
      try {
        command(auth);
      } catch (const BrokerLost&) {
        throw;
      } catch (const Error&) {
        // The reply may quote the command; the password must not reach a message.
        throw Error("farm broker " + where_ + ": the server refused the password (AUTH)");
      }
    }
  }
  ~RedisConnection() {
    if (ctx_) redisFree(ctx_);
  }
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  Reply command(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (r == nullptr) {
      throw BrokerLost("farm broker " + where_ + ": " + args[0] +
                       " failed: " + (ctx_->err ? ctx_->errstr : "no reply"));
    }
    if (r->type == REDIS_REPLY_ERROR) {
      const std::string why(r->str, r->len);
      freeReplyObject(r);
      throw Error("farm broker " + where_ + ": " + args[0] + ": " + why);
    }
    Reply out = convert(*r);
    freeReplyObject(r);
    return out;
  }

 private:
  static Reply convert(const redisReply& r) {
    Reply out;
    if (r.type == REDIS_REPLY_STRING || r.type == REDIS_REPLY_STATUS) {
      out.nil = false;
      out.str.assign(r.str, r.len);
    } else if (r.type == REDIS_REPLY_INTEGER) {
      out.nil = false;
      out.integer = r.integer;
    } else if (r.type == REDIS_REPLY_ARRAY) {
      out.nil = false;
      for (size_t i = 0; i < r.elements; ++i) {
        const redisReply* e = r.element[i];
        out.elements.emplace_back(e->type == REDIS_REPLY_STRING ? std::string(e->str, e->len)
                                                                : std::string());
        out.items.push_back(convert(*e));
      }
    }
    return out;
  }

  std::string where_;
  redisContext* ctx_ = nullptr;
};

namespace {

struct Keys {
  std::string prefix;
  explicit Keys(const BrokerAddress& b) : prefix("tessera:farm:" + b.pool + ":") {}
  std::string jobs() const { return prefix + "jobs"; }
  std::string agents() const { return prefix + "agents"; }
  std::string agent(const std::string& name) const { return prefix + "agent:" + name; }
  std::string heartbeat(const std::string& agent) const { return prefix + "heartbeat:" + agent; }
  std::string model(const std::string& key) const { return prefix + "model:" + key; }
  std::string reply(const std::string& run) const { return prefix + "reply:" + run; }
};

std::string ms_text(double seconds) {
  return std::to_string(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
}

std::string unix_time() {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

// A new connection, retried for up to kFarmReconnectS (the server restarting, the network cut).
std::unique_ptr<RedisConnection> connect_retrying(const BrokerAddress& broker,
                                                  const std::atomic<bool>* stop = nullptr) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kFarmReconnectS);
  while (true) {
    try {
      return std::make_unique<RedisConnection>(broker);
    } catch (const BrokerLost& e) {
      if (std::chrono::steady_clock::now() > deadline || (stop && stop->load())) {
        throw Error(std::string(e.what()) + " (gave up after " +
                    std::to_string(static_cast<int>(kFarmReconnectS)) + " s)");
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// The consumer group the agents read the job stream in, and the consumer that takes over the
// jobs of dead agents while they are queued again.
constexpr const char* kGroup = "agents";
constexpr const char* kRecoverer = "recovery";

// Creates the job stream and its group when missing (a new pool, or a server that restarted
// without persistence); the group starts at the stream's beginning, so no job added before it is
// missed.
void ensure_group(RedisConnection& redis, const Keys& k) {
  try {
    redis.command({"XGROUP", "CREATE", k.jobs(), kGroup, "0", "MKSTREAM"});
  } catch (const BrokerLost&) {
    throw;
  } catch (const Error& e) {
    if (std::string(e.what()).find("BUSYGROUP") == std::string::npos) throw;
  }
}

// A stream entry: its id and its "job" field ("" when the entry has none).
struct Entry {
  std::string id, job;
};

// The entries of an XREADGROUP / XCLAIM reply part: [[id, [field, value, ...]], ...].
std::vector<Entry> entries_of(const RedisConnection::Reply& list) {
  std::vector<Entry> out;
  for (const RedisConnection::Reply& e : list.items) {
    if (e.items.size() != 2) continue;
    Entry entry{e.items[0].str, ""};
    const std::vector<std::string>& fields = e.items[1].elements;
    for (size_t i = 0; i + 1 < fields.size(); i += 2) {
      if (fields[i] == "job") entry.job = fields[i + 1];
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// Adds a job to the stream; returns its entry id.
std::string add_job(RedisConnection& redis, const Keys& k, const std::string& job) {
  return redis.command({"XADD", k.jobs(), "*", "job", job}).str;
}

// Removes an entry for good: acknowledged (it leaves the pending list of whoever holds it) and
// deleted (the stream keeps only jobs not yet answered).
void retire(RedisConnection& redis, const Keys& k, const std::string& id) {
  redis.command({"XACK", k.jobs(), kGroup, id});
  redis.command({"XDEL", k.jobs(), id});
}

// Takes over the jobs consumer `agent` holds unacknowledged (claimed by `claimer` once they have
// been idle for `min_idle_ms`: of two tuners recovering one agent, one gets each job) and gives
// each to `requeue`, which returns whether it goes back on the stream as a new entry.
template <class Requeue>
int take_over(RedisConnection& redis, const Keys& k, const std::string& agent,
              const std::string& claimer, const std::string& min_idle_ms, Requeue requeue) {
  int moved = 0;
  const RedisConnection::Reply pending =
      redis.command({"XPENDING", k.jobs(), kGroup, "-", "+", "1000", agent});
  for (const RedisConnection::Reply& p : pending.items) {
    if (p.items.empty()) continue;
    const std::string id = p.items[0].str;
    for (const Entry& e :
         entries_of(redis.command({"XCLAIM", k.jobs(), kGroup, claimer, min_idle_ms, id}))) {
      retire(redis, k, e.id);
      if (e.job.empty() || !requeue(e.job, agent)) continue;
      add_job(redis, k, e.job);
      ++moved;
    }
  }
  return moved;
}

// The jobs of agents whose heartbeat expired go back on the stream (those `requeue` accepts), and
// the dead agents leave the pool's set and the group. *alive counts the others.
template <class Requeue>
int recover_dead_agents(RedisConnection& redis, const Keys& k, Requeue requeue, int* alive) {
  int recovered = 0;
  *alive = 0;
  for (const std::string& agent : redis.command({"SMEMBERS", k.agents()}).elements) {
    if (redis.command({"EXISTS", k.heartbeat(agent)}).integer > 0) {
      ++*alive;
      continue;
    }
    try {
      recovered += take_over(redis, k, agent, kRecoverer, "1000", requeue);
      redis.command({"XGROUP", "DELCONSUMER", k.jobs(), kGroup, agent});
    } catch (const BrokerLost&) {
      throw;
    } catch (const Error& e) {
      // No stream or group yet (nothing was ever queued): nothing to recover.
      if (std::string(e.what()).find("NOGROUP") == std::string::npos) throw;
    }
    redis.command({"SREM", k.agents(), agent});
  }
  return recovered;
}

}  // namespace

FarmClient::FarmClient(const BrokerAddress& broker, double agent_wait_s)
    : broker_(broker),
      redis_(std::make_unique<RedisConnection>(broker)),
      agent_wait_s_(agent_wait_s) {
  std::random_device rd;
  char id[32];
  std::snprintf(id, sizeof(id), "%08x%08x", rd(), rd());
  run_id_ = host_name() + "-" + std::to_string(getpid()) + "-" + id;
  redis_->command({"PING"});
}

FarmClient::~FarmClient() = default;

void FarmClient::reconnect() {
  redis_.reset();
  redis_ = connect_retrying(broker_);
  for (auto& [path, model] : models_) model.uploaded = false;  // a restarted server lost them
  ++reconnects_;
}

int FarmClient::agents_alive() {
  const Keys k(broker_);
  int alive = 0;
  for (const std::string& agent : redis_->command({"SMEMBERS", k.agents()}).elements) {
    if (redis_->command({"EXISTS", k.heartbeat(agent)}).integer > 0) ++alive;
  }
  return alive;
}

std::string FarmClient::upload_model(const std::string& path) {
  ModelKey& model = models_[path];
  if (model.uploaded) return model.key;
  // Read once per path and connection: a tune sends the same model in every batch. Weights in
  // external data files travel inside it: the agent has only what the server gives it.
  const std::string bytes = self_contained_onnx(path);
  if (static_cast<int64_t>(bytes.size()) > kMaxModelBytes) {
    throw Error(path + ": with its external data the model is " + std::to_string(bytes.size()) +
                " bytes, more than the farm carries (" + std::to_string(kMaxModelBytes) + ")");
  }
  model.key = content_key(bytes);
  const Keys k(broker_);
  // SET NX: agents may already hold it from another tuner; EXPIRE keeps it a week from now.
  redis_->command({"SET", k.model(model.key), bytes, "EX", std::to_string(kModelTtlS), "NX"});
  redis_->command({"EXPIRE", k.model(model.key), std::to_string(kModelTtlS)});
  model.uploaded = true;
  return model.key;
}

std::vector<MeasureResult> FarmClient::measure(const std::vector<MeasureRequest>& requests) {
  const Keys k(broker_);
  const std::string reply = k.reply(run_id_);
  std::vector<MeasureResult> out(requests.size());
  std::map<std::string, size_t> pending;  // job id -> request index
  std::map<std::string, std::string> payload_of;
  std::map<std::string, int> losses;
  std::map<std::string, std::string> entry_of;  // job id -> its latest stream entry
  // Stores the models and queues the pending jobs: at the start, and again after a reconnect (a
  // restarted server without persistence lost them; an answer that arrives twice is dropped).
  auto send = [&](bool first) {
    ensure_group(*redis_, k);
    for (size_t i = 0; i < requests.size(); ++i) {
      if (first) {
        const std::string id = std::to_string(next_job_++);
        pending[id] = i;
        payload_of[id] = id + "\t" + reply + "\t" + upload_model(requests[i].model) + "\t" +
                         encode_request(requests[i]);
      } else {
        upload_model(requests[i].model);
      }
    }
    for (const auto& [id, i] : pending) entry_of[id] = add_job(*redis_, k, payload_of[id]);
  };
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto last_alive = now();
  auto last_check = now() - std::chrono::hours(1);
  bool sent = false, broken = false;
  while (!sent || !pending.empty()) {
    try {
      if (broken) {
        // A server that restarted without persistence lost the queue and the models: send again.
        reconnect();
        broken = false;
        if (sent) send(false);
        last_alive = now();
      }
      if (!sent) {
        send(true);
        sent = true;
        continue;
      }
      const RedisConnection::Reply r = redis_->command({"BLPOP", reply, "1"});
      if (!r.nil && r.elements.size() == 2) {
        const std::vector<std::string> f = split_fields(r.elements[1], 2);
        auto it = f.empty() ? pending.end() : pending.find(f[0]);
        if (it != pending.end()) {  // else an answer to a job already answered (measured twice)
          std::optional<MeasureResult> m = decode_result(f[1]);
          if (!m) {
            m = MeasureResult{};
            m->status = "crash";
            m->error = "farm: an agent answered a malformed result line";
          }
          out[it->second] = *m;
          pending.erase(it);
        }
      }
      if (now() - last_check < std::chrono::seconds(1) || pending.empty()) continue;
      last_check = now();
      // Jobs of dead agents go back to the queue; ours count their losses.
      int alive = 0;
      recovered_ += recover_dead_agents(
          *redis_, k,
          [&](const std::string& job, const std::string& agent) {
            const std::vector<std::string> f = split_fields(job, 2);
            auto it = f.empty() ? pending.end() : pending.find(f[0]);
            if (it == pending.end() || ++losses[f[0]] <= kMaxFarmLosses) return true;
            MeasureResult& m = out[it->second];
            m.status = "crash";
            m.reported = false;
            m.error = "farm: lost " + std::to_string(losses[f[0]]) +
                      " times by agents that died while measuring it (last: " + agent + ")";
            pending.erase(it);
            return false;
          },
          &alive);
      if (alive > 0) {
        last_alive = now();
      } else if (std::chrono::duration<double>(now() - last_alive).count() > agent_wait_s_) {
        // Our jobs leave the queue: nobody will measure them for this run.
        for (const auto& [id, i] : pending) retire(*redis_, k, entry_of[id]);
        throw Error("farm broker " + broker_.text() + ": no agent alive for " +
                    std::to_string(static_cast<int>(agent_wait_s_)) + " s with " +
                    std::to_string(pending.size()) +
                    " measurement(s) pending; start agents on the devices with `tessera agent "
                    "--broker " +
                    broker_.text() + "`");
      }
    } catch (const BrokerLost&) {
      broken = true;
    }
  }
  return out;
}

namespace {

// "Mali-G78 r38p1" -> "mali-g78-r38p1": a pool key from a device name.
std::string key_from_name(const std::string& name) {
  std::string key;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!key.empty() && key.back() != '-') {
      key += '-';
    }
  }
  while (!key.empty() && key.back() == '-') key.pop_back();
  return key.substr(0, 100);
}

// Why a job cannot be served by this agent ("" when it can): the checks an agent makes before
// anything runs, so a malformed or foreign request never reaches a worker.
std::string job_problem(const std::string& job, const std::vector<std::string>& fields,
                        const std::optional<MeasureRequest>& req,
                        const std::vector<std::string>& targets) {
  if (job.size() > kMaxFarmJobBytes) {
    return "a job of " + std::to_string(job.size()) + " bytes (at most " +
           std::to_string(kMaxFarmJobBytes) + ")";
  }
  if (fields.size() != 4 || !all_digits(fields[0]) || fields[1].empty()) {
    return "a job that is not <id> <reply> <model> <request>";
  }
  const size_t dash = fields[2].find('-');
  if (dash == std::string::npos || !all_digits(fields[2].substr(0, dash)) ||
      fields[2].size() - dash - 1 != 16) {
    return "model key '" + escaped(fields[2]) + "' is not <size>-<16 hex digits>";
  }
  if (!req) return "an unreadable request line";
  if (req->compile_only) return "a compile-only request (agents measure)";
  if (req->node.empty() || req->target.empty() || req->schedule.empty()) {
    return "a request without node, target or schedule";
  }
  if (req->repeats < 1 || req->repeats > 100000) {
    return "repeats " + std::to_string(req->repeats) + " outside 1..100000";
  }
  if (!(req->timeout_s > 0 && req->timeout_s <= 86400)) return "a timeout outside (0, 86400] s";
  if (req->knobs.size() > 64) return "more than 64 knobs";
  if (!targets.empty()) {
    const std::string plugin = detail::split_target(req->target).first;
    bool ours = false;
    for (const std::string& t : targets) ours = ours || detail::split_target(t).first == plugin;
    if (!ours) return "target '" + escaped(req->target) + "' is not one this agent measures";
  }
  return "";
}

}  // namespace

int serve_farm_agent(const AgentOptions& options) {
  BrokerAddress broker = options.broker;
  const std::string name =
      options.name.empty() ? host_name() + "-" + std::to_string(getpid()) : options.name;
  if (const std::string why = farm_key_problem(name); !why.empty()) {
    throw Error("farm agent name: " + why);
  }
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  if (options.cache_dir.empty()) throw Error("farm agent: a cache directory is required");
  const std::filesystem::path models = std::filesystem::path(options.cache_dir) / "models";
  std::filesystem::create_directories(models);
  // The devices this agent measures, probed as a local tune would pick them.
  std::string devices, drivers, plugins;
  if (!options.targets.empty()) {
    PluginHost host;
    for (const std::string& target : options.targets) {
      const auto [plugin_name, selector] = detail::split_target(target);
      auto plugin = host.find(plugin_name);
      if (!plugin) throw Error("farm agent: no plugin '" + plugin_name + "' loaded");
      PluginDeviceInfo info;
      detail::pick_device(*plugin->create_instance(), selector, &info);
      devices += (devices.empty() ? "" : ", ") + info.name;
      plugins += (plugins.empty() ? "" : ", ") + plugin_name + " " + plugin->version();
      drivers += (drivers.empty() ? "" : ", ") + info.driver_version;
      if (options.key_from_device && &target == &options.targets.front()) {
        broker.pool = key_from_name(info.name);
        if (broker.pool.empty()) broker.pool = "default";
      }
    }
  }
  const Keys k(broker);
  // The worker first: an agent joins the pool only once it can measure.
  MeasureWorker worker(options.worker_command, options.persistent_worker);
  worker.check_start();
  const std::string lease_ms = ms_text(options.lease_s);
  std::unique_ptr<RedisConnection> redis = connect_retrying(broker, options.stop);
  int64_t done = 0, failed = 0;
  // Joins the pool: heartbeat, registration, and whatever a previous life under this name held
  // goes back to the queue.
  auto join = [&] {
    redis->command({"SET", k.heartbeat(name), "1", "PX", lease_ms});
    redis->command({"SADD", k.agents(), name});
    redis->command({"HSET",
                    k.agent(name),
                    "device",
                    devices,
                    "driver",
                    drivers,
                    "engine",
                    engine_version(),
                    "plugins",
                    plugins,
                    "targets",
                    [&] {
                      std::string t;
                      for (const std::string& s : options.targets) t += (t.empty() ? "" : ",") + s;
                      return t;
                    }(),
                    "seen",
                    unix_time(),
                    "done",
                    std::to_string(done),
                    "failed",
                    std::to_string(failed),
                    "quarantined",
                    ""});
    ensure_group(*redis, k);
    const int handed = take_over(*redis, k, name, name, "0",
                                 [](const std::string&, const std::string&) { return true; });
    if (handed > 0) {
      log("agent " + name + ": handed back " + std::to_string(handed) +
          " job(s) a previous run of this agent held");
    }
  };
  join();
  // The heartbeat lives on its own connection and thread, so a long measurement keeps it.
  std::atomic<bool> done_flag{false};
  std::thread heartbeat([&] {
    const auto period = std::chrono::duration<double>(options.lease_s / 3);
    std::unique_ptr<RedisConnection> beat;
    while (!done_flag) {
      try {
        if (!beat) beat = std::make_unique<RedisConnection>(broker);
        beat->command({"SET", k.heartbeat(name), "1", "PX", lease_ms});
      } catch (const std::exception&) {
        beat.reset();  // tried again next period; meanwhile the tuner may hand our job on
      }
      const auto until = std::chrono::steady_clock::now() + period;
      while (!done_flag && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  });
  struct Join {
    std::atomic<bool>& done;
    std::thread& t;
    ~Join() {
      done = true;
      t.join();
    }
  } join_heartbeat{done_flag, heartbeat};

  log("agent " + name + ": serving " + broker.text() + (devices.empty() ? "" : " with " + devices));
  int answered = 0, failures_in_row = 0;
  std::string quarantined;
  // A job taken (its entry id and payload) but not yet answered when the connection broke:
  // answered after reconnecting.
  struct Taken {
    Entry entry;
    MeasureResult result;
  };
  std::optional<Taken> unanswered;
  bool broken = false;
  while ((options.max_jobs <= 0 || answered < options.max_jobs) &&
         !(options.stop && options.stop->load()) && quarantined.empty()) {
    try {
      if (broken) {
        redis = connect_retrying(broker, options.stop);
        broken = false;
        join();
      }
      Entry entry;
      MeasureResult result;
      std::optional<MeasureRequest> req;
      std::vector<std::string> f;
      if (unanswered) {
        entry = unanswered->entry;
        result = unanswered->result;
        f = split_fields(entry.job, 4);
      } else {
        RedisConnection::Reply r;
        try {
          r = redis->command({"XREADGROUP", "GROUP", kGroup, name, "COUNT", "1", "BLOCK", "1000",
                              "STREAMS", k.jobs(), ">"});
        } catch (const BrokerLost&) {
          throw;
        } catch (const Error& e) {
          // The stream or group went away (a server restarted without persistence): made again.
          if (std::string(e.what()).find("NOGROUP") == std::string::npos) throw;
          ensure_group(*redis, k);
          continue;
        }
        if (r.nil || r.items.empty() || r.items[0].items.size() != 2) continue;
        const std::vector<Entry> got = entries_of(r.items[0].items[1]);
        if (got.empty()) continue;
        entry = got[0];
        const std::string& job = entry.job;
        f = split_fields(job, 4);
        req = f.size() == 4 ? decode_request(f[3]) : std::nullopt;
        if (const std::string why = job_problem(job, f, req, options.targets); !why.empty()) {
          result.status = "refused";
          result.error = "farm agent " + name + " refused " + why;
        } else {
          const std::filesystem::path model = models / (f[2] + ".onnx");
          if (!std::filesystem::exists(model)) {
            const RedisConnection::Reply bytes = redis->command({"GET", k.model(f[2])});
            if (!bytes.nil) {
              // Written whole, then renamed: another agent on this cache never reads half a file.
              const std::string tmp = model.string() + ".tmp" + std::to_string(getpid());
              std::ofstream(tmp, std::ios::binary)
                  .write(bytes.str.data(), static_cast<std::streamsize>(bytes.str.size()));
              std::filesystem::rename(tmp, model);
            }
          }
          if (!std::filesystem::exists(model)) {
            result.status = "refused";
            result.error = "farm agent " + name + ": model " + f[2] + " is not on the server";
          } else {
            req->model = model.string();
            req->cache_dir = (std::filesystem::path(options.cache_dir) / "kernels").string();
            result = worker.measure(*req);
          }
        }
        unanswered = Taken{entry, result};
      }
      if (f.size() == 4 && !f[1].empty() && all_digits(f[0])) {
        redis->command({"RPUSH", f[1], f[0] + "\t" + encode_result(result)});
        redis->command({"EXPIRE", f[1], std::to_string(kReplyTtlS)});
      }
      retire(*redis, k, entry.id);
      unanswered.reset();
      ++answered;
      ++done;
      if (result.status != "ok") ++failed;
      // A worker that died or hung (the outcome inferred, not reported) on candidate after
      // candidate points at the device, not at the candidates.
      failures_in_row = result.reported ? 0 : failures_in_row + 1;
      if (options.quarantine_after > 0 && failures_in_row >= options.quarantine_after) {
        quarantined = "its measuring worker died or hung on " + std::to_string(failures_in_row) +
                      " candidates in a row (last: " + result.status + ": " + result.error + ")";
      }
      redis->command({"HSET", k.agent(name), "seen", unix_time(), "done", std::to_string(done),
                      "failed", std::to_string(failed), "quarantined", quarantined});
      log("agent " + name + ": job " + (f.empty() ? "?" : f[0]) + " " +
          (req ? req->node + " " + req->schedule : "") + ": " + result.status +
          (result.status == "ok" ? "" : " (" + result.error + ")"));
    } catch (const BrokerLost& e) {
      log("agent " + name + ": " + e.what() + "; reconnecting");
      broken = true;
    }
  }
  if (!quarantined.empty()) {
    log("agent " + name + ": quarantined: " + quarantined + "; it leaves the queue");
  }
  redis->command({"DEL", k.heartbeat(name)});
  redis->command({"SREM", k.agents(), name});
  return answered;
}

FarmStatus farm_status(const BrokerAddress& broker) {
  RedisConnection redis(broker);
  const Keys k(broker);
  FarmStatus status;
  status.broker = broker.text();
  // Jobs in the stream that no agent holds: the stream keeps only unanswered jobs, and the
  // group's pending list those an agent took.
  status.queued = redis.command({"XLEN", k.jobs()}).integer;
  try {
    const RedisConnection::Reply held = redis.command({"XPENDING", k.jobs(), kGroup});
    if (!held.items.empty()) status.queued -= held.items[0].integer;
  } catch (const BrokerLost&) {
    throw;
  } catch (const Error&) {
    // No group yet: nothing is held.
  }
  // Registered agents: those in the pool's set and those that left a registration (quarantined
  // or stopped ones stay visible until it expires).
  std::set<std::string> names;
  for (const std::string& n : redis.command({"SMEMBERS", k.agents()}).elements) names.insert(n);
  // KEYS walks the whole key space: fine for a farm server, whose keys are the farm's own.
  for (const std::string& key : redis.command({"KEYS", k.agent("*")}).elements) {
    names.insert(key.substr(k.agent("").size()));
  }
  const long long now = std::stoll(unix_time());
  for (const std::string& n : names) {
    FarmAgentStatus a;
    a.name = n;
    a.alive = redis.command({"EXISTS", k.heartbeat(n)}).integer > 0;
    const std::vector<std::string> v =
        redis
            .command({"HMGET", k.agent(n), "device", "driver", "engine", "targets", "seen", "done",
                      "failed", "quarantined", "plugins"})
            .elements;
    if (v.size() == 9) {
      a.device = v[0];
      a.driver = v[1];
      a.engine = v[2];
      a.targets = v[3];
      if (all_digits(v[4])) a.last_seen_s = static_cast<double>(now - std::stoll(v[4]));
      if (all_digits(v[5])) a.done = std::stoll(v[5]);
      if (all_digits(v[6])) a.failed = std::stoll(v[6]);
      a.quarantined = v[7];
      a.plugins = v[8];
    }
    status.agents.push_back(a);
  }
  return status;
}

std::vector<std::string> farm_pools(const BrokerAddress& broker) {
  RedisConnection redis(broker);
  std::set<std::string> pools;
  for (const char* suffix : {":agents", ":jobs"}) {
    for (const std::string& key :
         redis.command({"KEYS", std::string("tessera:farm:*") + suffix}).elements) {
      const std::string inner = key.substr(13, key.size() - 13 - std::strlen(suffix));
      if (farm_key_problem(inner).empty()) pools.insert(inner);
    }
  }
  return {pools.begin(), pools.end()};
}

}  // namespace tessera::tune
