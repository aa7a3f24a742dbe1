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

// The server answered a command with an error (WRONGTYPE for a key holding another type, NOGROUP,
// BUSYGROUP, ...): the connection is fine. reply() is the server's text.
class BrokerRefused : public Error {
 public:
  BrokerRefused(const std::string& message, std::string reply)
      : Error(message), reply_(std::move(reply)) {}
  const std::string& reply() const { return reply_; }
  bool is(const char* code) const { return reply_.rfind(code, 0) == 0; }

 private:
  std::string reply_;
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
      const std::string why = escaped(std::string(r->str, r->len));
      freeReplyObject(r);
      throw BrokerRefused("farm broker " + where_ + ": " + args[0] + ": " + why, why);
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
  // Under the job's content hash: the job goes back on the stream as a new entry each time.
  std::string lost(const std::string& job) const { return prefix + "lost:" + content_key(job); }
  std::string dead() const { return prefix + "dead"; }
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
  } catch (const BrokerRefused& e) {
    if (!e.is("BUSYGROUP")) throw;
  }
}

// A stream entry's fields ([field, value, ...]; an odd last one is dropped).
std::map<std::string, std::string> fields_of(const RedisConnection::Reply& list) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i + 1 < list.elements.size(); i += 2) {
    out[list.elements[i]] = list.elements[i + 1];
  }
  return out;
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
    const std::map<std::string, std::string> fields = fields_of(e.items[1]);
    const auto job = fields.find("job");
    out.push_back({e.items[0].str, job == fields.end() ? "" : job->second});
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

// Why `key` cannot be a job's reply list ("" when it can): only this pool's reply keys, so that no
// job makes an agent write anywhere else on the server.
std::string reply_key_problem(const Keys& k, const std::string& key) {
  const std::string prefix = k.reply("");
  if (key.rfind(prefix, 0) == 0 && farm_key_problem(key.substr(prefix.size())).empty()) return "";
  return "reply key '" + escaped(key.substr(0, 200)) + "' is not " + prefix + "<run>";
}

// Why a job cannot be answered at all ("" when it can): no id or reply key to answer on.
std::string unanswerable_problem(const Keys& k, const std::string& job,
                                 const std::vector<std::string>& fields) {
  if (job.empty()) return "a stream entry without a job field";
  if (fields.size() != 4 || !all_digits(fields[0]) || fields[0].size() > 20) {
    return "a job that is not <id> <reply> <model> <request>";
  }
  return reply_key_problem(k, fields[1]);
}

// Answers job `id` on its reply list. Throws BrokerRefused when the key holds another type.
void push_answer(RedisConnection& redis, const std::string& reply_key, const std::string& id,
                 const MeasureResult& result) {
  redis.command({"RPUSH", reply_key, id + "\t" + encode_result(result)});
  redis.command({"EXPIRE", reply_key, std::to_string(kReplyTtlS)});
}

// Adds a job to the pool's dead letters with the reason and who moved it; "" when recorded, else
// why not (the dead-letter key holds another type).
std::string dead_letter(RedisConnection& redis, const Keys& k, const std::string& job,
                        const std::string& reason, const std::string& by) {
  try {
    redis.command({"XADD", k.dead(), "MAXLEN", "~", std::to_string(kMaxFarmDeadLetters), "*", "job",
                   job.substr(0, kMaxDeadLetterJobBytes), "reason", reason, "agent", by});
    return "";
  } catch (const BrokerRefused& e) {
    return e.what();
  }
}

// What take_over did with the jobs it took.
struct Handed {
  int queued = 0, dead = 0;
};

// A job taken from an agent that stopped while holding it (in stream entry `entry`) counts one more
// loss; at kMaxFarmLosses it goes to the dead letters and is answered "crash" (where its reply key
// allows), else back on the stream. The losses are a set of entry ids, so a tuner and a restarted
// agent handing back the same entry at once count it once. `by` names who moved it.
void hand_back(RedisConnection& redis, const Keys& k, const Entry& entry, const std::string& agent,
               const std::string& by, Handed* handed) {
  const std::string& job = entry.job;
  long long lost = kMaxFarmLosses;  // a key of another type: the job is not sent round again
  try {
    redis.command({"SADD", k.lost(job), entry.id});
    redis.command({"EXPIRE", k.lost(job), std::to_string(kReplyTtlS)});
    lost = redis.command({"SCARD", k.lost(job)}).integer;
  } catch (const BrokerRefused&) {
  }
  if (lost < kMaxFarmLosses) {
    add_job(redis, k, job);
    ++handed->queued;
    return;
  }
  const std::string reason = "it stopped agents " + std::to_string(lost) +
                             " times while they held it (last: " + agent + ")";
  dead_letter(redis, k, job, reason, by);
  ++handed->dead;
  const std::vector<std::string> f = split_fields(job, 4);
  if (!unanswerable_problem(k, job, f).empty()) return;
  MeasureResult crash;
  crash.status = "crash";
  crash.reported = false;
  crash.error = "farm: " + reason + "; moved to the pool's dead letters";
  try {
    push_answer(redis, f[1], f[0], crash);
  } catch (const BrokerRefused&) {
    // Nobody can be told; the dead letter says why it was never measured.
  }
}

// Takes over the jobs consumer `agent` holds unacknowledged (claimed by `claimer` once they have
// been idle for `min_idle_ms`: of two tuners recovering one agent, one gets each job) and hands
// each back (hand_back). Returns whether `agent` holds nothing now.
bool take_over(RedisConnection& redis, const Keys& k, const std::string& agent,
               const std::string& claimer, const std::string& min_idle_ms, const std::string& by,
               Handed* handed) {
  const RedisConnection::Reply pending =
      redis.command({"XPENDING", k.jobs(), kGroup, "-", "+", "1000", agent});
  for (const RedisConnection::Reply& p : pending.items) {
    if (p.items.empty()) continue;
    const std::string id = p.items[0].str;
    for (const Entry& e :
         entries_of(redis.command({"XCLAIM", k.jobs(), kGroup, claimer, min_idle_ms, id}))) {
      retire(redis, k, e.id);
      if (!e.job.empty()) hand_back(redis, k, e, agent, by, handed);
    }
  }
  // Entries not idle long enough stay; entries deleted meanwhile left the list with the claim.
  return redis.command({"XPENDING", k.jobs(), kGroup, "-", "+", "1", agent}).items.empty();
}

// The jobs of agents whose heartbeat expired are handed back, and the dead agents leave the
// pool's set and the group once they hold nothing. *alive counts the others.
Handed recover_dead_agents(RedisConnection& redis, const Keys& k, const std::string& by,
                           int* alive) {
  Handed handed;
  *alive = 0;
  for (const std::string& agent : redis.command({"SMEMBERS", k.agents()}).elements) {
    if (redis.command({"EXISTS", k.heartbeat(agent)}).integer > 0) {
      ++*alive;
      continue;
    }
    try {
      // A consumer deleted while it holds jobs would lose them: it stays until they are handed on.
      if (!take_over(redis, k, agent, kRecoverer, "1000", by, &handed)) continue;
      redis.command({"XGROUP", "DELCONSUMER", k.jobs(), kGroup, agent});
    } catch (const BrokerRefused& e) {
      // No stream or group yet (nothing was ever queued): nothing to recover.
      if (!e.is("NOGROUP")) throw;
    }
    redis.command({"SREM", k.agents(), agent});
  }
  return handed;
}

}  // namespace

FarmClient::FarmClient(const BrokerAddress& broker, double agent_wait_s)
    : broker_(broker),
      redis_(std::make_unique<RedisConnection>(broker)),
      agent_wait_s_(agent_wait_s) {
  std::random_device rd;
  char id[32];
  std::snprintf(id, sizeof(id), "%08x%08x", rd(), rd());
  // Agents answer only on reply keys whose run id is a key name (farm_key_problem).
  std::string host = host_name().substr(0, 40);
  for (char& c : host) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
  }
  run_id_ = host + "-" + std::to_string(getpid()) + "-" + id;
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
  // Written over whatever the key holds: the same content, or something agents would refuse.
  redis_->command({"SET", k.model(model.key), bytes, "EX", std::to_string(kModelTtlS)});
  model.uploaded = true;
  return model.key;
}

std::vector<MeasureResult> FarmClient::measure(const std::vector<MeasureRequest>& requests) {
  const Keys k(broker_);
  const std::string reply = k.reply(run_id_);
  std::vector<MeasureResult> out(requests.size());
  std::map<std::string, size_t> pending;  // job id -> request index
  std::map<std::string, std::string> payload_of;
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
      // Jobs of dead agents go back to the queue, or to the dead letters (answered "crash": the
      // answer arrives on our reply list like any other).
      int alive = 0;
      recovered_ += recover_dead_agents(*redis_, k, "tuner " + run_id_, &alive).queued;
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

std::string farm_key_from_device(const std::string& device_name) {
  std::string key;
  for (char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!key.empty() && key.back() != '-') {
      key += '-';
    }
  }
  while (!key.empty() && key.back() == '-') key.pop_back();
  return key.substr(0, 100);
}

namespace {

// "<size>-<16 hex digits>", as content_key writes it (so the name is safe as a file name too).
bool is_model_key(const std::string& key) {
  const size_t dash = key.find('-');
  if (dash == std::string::npos || dash > 12 || !all_digits(key.substr(0, dash))) return false;
  const std::string hash = key.substr(dash + 1);
  return hash.size() == 16 && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
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
  if (!is_model_key(fields[2])) {
    return "model key '" + escaped(fields[2].substr(0, 200)) + "' is not <size>-<16 hex digits>";
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

MeasureResult refusal(const std::string& why) {
  MeasureResult r;
  r.status = "refused";
  r.error = why;
  return r;
}

// One agent's life: joins the pool, serves one job at a time and answers it (or moves it to the
// dead letters), reconnects when the server goes away, and leaves when stopped or quarantined.
// Whatever a job holds, it ends answered or dead-lettered and acknowledged: only the server
// staying away for kFarmReconnectS, or failing at the start, ends the agent with an error.
class Agent {
 public:
  explicit Agent(const AgentOptions& options);
  int serve();

 private:
  // A job read and examined: answered with `result`, or moved to the dead letters when
  // `dead_reason` is set.
  struct Taken {
    Entry entry;
    std::vector<std::string> fields;
    MeasureResult result;
    std::string dead_reason;
    std::string what;  // "<node> <schedule>" for the log
  };
  // Lines name job fields and device strings from elsewhere: control characters are escaped.
  void log(const std::string& line) const {
    if (options_.log) options_.log(escaped(line));
  }
  void probe_devices();
  void join(bool first);
  void keep_heartbeat(const std::atomic<bool>& done) const;
  std::optional<Entry> next_entry();
  Taken examine(const Entry& entry);
  Taken examine_unguarded(const Entry& entry);
  MeasureResult measure_job(const std::string& model_key, MeasureRequest req);
  std::string fetch_model(const std::string& key, std::string* why);
  void finish(const Taken& taken);
  void count_outcome(const MeasureResult& result);

  const AgentOptions& options_;
  BrokerAddress broker_;
  Keys keys_;
  std::string name_, devices_, drivers_, plugins_;
  std::filesystem::path models_;
  std::unique_ptr<MeasureWorker> worker_;
  std::unique_ptr<RedisConnection> redis_;
  bool own_pending_ = false;  // read this agent's own pending entries before new ones
  int64_t done_ = 0, failed_ = 0;
  int answered_ = 0, failures_in_row_ = 0;
  std::string quarantined_;
};

Agent::Agent(const AgentOptions& options)
    : options_(options),
      broker_(options.broker),
      keys_(options.broker),
      name_(options.name.empty() ? host_name() + "-" + std::to_string(getpid()) : options.name) {
  if (const std::string why = farm_key_problem(name_); !why.empty()) {
    throw Error("farm agent name: " + why);
  }
  if (options.cache_dir.empty()) throw Error("farm agent: a cache directory is required");
  models_ = std::filesystem::path(options.cache_dir) / "models";
  std::filesystem::create_directories(models_);
  probe_devices();
  keys_ = Keys(broker_);
  // The worker first: an agent joins the pool only once it can measure.
  worker_ = std::make_unique<MeasureWorker>(options.worker_command, options.persistent_worker);
  worker_->check_start();
  redis_ = connect_retrying(broker_, options.stop);
}

// The devices this agent measures, probed as a local tune would pick them.
void Agent::probe_devices() {
  if (options_.targets.empty()) return;
  PluginHost host;
  for (const std::string& target : options_.targets) {
    const auto [plugin_name, selector] = detail::split_target(target);
    auto plugin = host.find(plugin_name);
    if (!plugin) throw Error("farm agent: no plugin '" + plugin_name + "' loaded");
    PluginDeviceInfo info;
    detail::pick_device(*plugin->create_instance(), selector, &info);
    devices_ += (devices_.empty() ? "" : ", ") + info.name;
    plugins_ += (plugins_.empty() ? "" : ", ") + plugin_name + " " + plugin->version();
    drivers_ += (drivers_.empty() ? "" : ", ") + info.driver_version;
    if (options_.key_from_device && &target == &options_.targets.front()) {
      broker_.pool = farm_key_from_device(info.name);
      if (broker_.pool.empty()) broker_.pool = "default";
    }
  }
}

// Joins the pool: heartbeat, registration and the group. At the start, whatever a previous life
// under this name held is handed back (it stopped while holding it); after a reconnect this life
// still holds its job, and reads its own pending entries first.
void Agent::join(bool first) {
  redis_->command({"SET", keys_.heartbeat(name_), "1", "PX", ms_text(options_.lease_s)});
  redis_->command({"SADD", keys_.agents(), name_});
  std::string targets;
  for (const std::string& s : options_.targets) targets += (targets.empty() ? "" : ",") + s;
  redis_->command({"HSET",        keys_.agent(name_),
                   "device",      devices_,
                   "driver",      drivers_,
                   "engine",      engine_version(),
                   "plugins",     plugins_,
                   "targets",     targets,
                   "seen",        unix_time(),
                   "done",        std::to_string(done_),
                   "failed",      std::to_string(failed_),
                   "quarantined", ""});
  ensure_group(*redis_, keys_);
  if (!first) return;
  Handed handed;
  take_over(*redis_, keys_, name_, name_, "0", "agent " + name_, &handed);
  if (handed.queued + handed.dead > 0) {
    log("agent " + name_ + ": handed back " + std::to_string(handed.queued) +
        " job(s) a previous run of this agent held" +
        (handed.dead > 0 ? "; " + std::to_string(handed.dead) +
                               " that had stopped agents before went to the dead letters"
                         : ""));
  }
}

// The heartbeat thread's body: its own connection, so a long measurement keeps the lease.
void Agent::keep_heartbeat(const std::atomic<bool>& done) const {
  const auto period = std::chrono::duration<double>(options_.lease_s / 3);
  const std::string lease_ms = ms_text(options_.lease_s);
  std::unique_ptr<RedisConnection> beat;
  while (!done) {
    try {
      if (!beat) beat = std::make_unique<RedisConnection>(broker_);
      beat->command({"SET", keys_.heartbeat(name_), "1", "PX", lease_ms});
    } catch (const std::exception&) {
      beat.reset();  // tried again next period; meanwhile the tuner may hand our job on
    }
    const auto until = std::chrono::steady_clock::now() + period;
    while (!done && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

// The next job for this agent, waiting up to a second; nullopt when none came.
std::optional<Entry> Agent::next_entry() {
  RedisConnection::Reply r;
  try {
    r = redis_->command({"XREADGROUP", "GROUP", kGroup, name_, "COUNT", "1", "BLOCK", "1000",
                         "STREAMS", keys_.jobs(), own_pending_ ? "0" : ">"});
  } catch (const BrokerRefused& e) {
    // The stream or group went away (a server restarted without persistence): made again.
    if (!e.is("NOGROUP")) throw;
    ensure_group(*redis_, keys_);
    return std::nullopt;
  }
  std::vector<Entry> got;
  if (!r.nil && !r.items.empty() && r.items[0].items.size() == 2) {
    got = entries_of(r.items[0].items[1]);
  }
  if (got.empty()) {
    own_pending_ = false;
    return std::nullopt;
  }
  return got[0];
}

// Checks a job and measures it. Nothing in the job makes this throw: only the server going away.
Agent::Taken Agent::examine(const Entry& entry) {
  try {
    return examine_unguarded(entry);
  } catch (const BrokerLost&) {
    throw;
  } catch (const std::exception& e) {
    Taken t{entry, split_fields(entry.job, 4), {}, "", ""};
    t.result = refusal("farm agent " + name_ + " could not serve the job: " + e.what());
    if (!unanswerable_problem(keys_, entry.job, t.fields).empty()) {
      t.dead_reason = t.result.error;
    }
    return t;
  }
}

Agent::Taken Agent::examine_unguarded(const Entry& entry) {
  Taken t{entry, split_fields(entry.job, 4), {}, "", ""};
  if (const std::string why = unanswerable_problem(keys_, entry.job, t.fields); !why.empty()) {
    t.dead_reason = "it cannot be answered: " + why;
    return t;
  }
  const std::optional<MeasureRequest> req = decode_request(t.fields[3]);
  if (req) t.what = req->node + " " + req->schedule;
  if (const std::string why = job_problem(entry.job, t.fields, req, options_.targets);
      !why.empty()) {
    t.result = refusal("farm agent " + name_ + " refused " + why);
    return t;
  }
  t.result = measure_job(t.fields[2], *req);
  return t;
}

MeasureResult Agent::measure_job(const std::string& model_key, MeasureRequest req) {
  std::string why;
  req.model = fetch_model(model_key, &why);
  if (req.model.empty()) return refusal("farm agent " + name_ + ": " + why);
  req.cache_dir = (std::filesystem::path(options_.cache_dir) / "kernels").string();
  try {
    return worker_->measure(req);
  } catch (const std::exception& e) {
    // The worker could not be run at all: an outcome the worker did not report, so that an agent
    // whose worker keeps failing quarantines itself.
    MeasureResult r;
    r.status = "crash";
    r.reported = false;
    r.error = "farm agent " + name_ + ": the measuring worker failed: " + e.what();
    return r;
  }
}

// The model file of `key` in this agent's cache, fetched from the server the first time and
// checked against its key (size and hash): "" and *why when the server has no such model or holds
// something else under its key.
std::string Agent::fetch_model(const std::string& key, std::string* why) {
  const std::filesystem::path path = models_ / (key + ".onnx");
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path.string();
  const std::string where = keys_.model(key);
  const long long size = std::stoll(key.substr(0, key.find('-')));  // is_model_key: <= 12 digits
  RedisConnection::Reply bytes;
  try {
    const long long held = redis_->command({"STRLEN", where}).integer;
    if (held == 0) {
      *why = "model " + key + " is not on the server";
      return "";
    }
    if (held != size || size > kMaxModelBytes) {
      *why = "model key " + where + " holds " + std::to_string(held) + " bytes, not the " +
             std::to_string(size) + " its name says";
      return "";
    }
    bytes = redis_->command({"GET", where});
  } catch (const BrokerRefused& e) {
    *why = "model key " + where + " holds something else than a model: " + e.reply();
    return "";
  }
  if (bytes.nil || content_key(bytes.str) != key) {
    *why = "model key " + where + " holds bytes whose hash is not the one its name says";
    return "";
  }
  // Written whole, then renamed: another agent on this cache never reads half a file.
  const std::string tmp = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.str.data(), static_cast<std::streamsize>(bytes.str.size()));
    if (!out.good()) {
      *why = "cannot write the model to " + tmp;
      return "";
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    *why = "cannot store the model as " + path.string() + ": " + ec.message();
    return "";
  }
  return path.string();
}

// Answers the job (or moves it to the dead letters when it cannot be answered), acknowledges it
// and counts the outcome.
void Agent::finish(const Taken& t) {
  std::string dead = t.dead_reason;
  if (dead.empty()) {
    try {
      push_answer(*redis_, t.fields[1], t.fields[0], t.result);
    } catch (const BrokerRefused& e) {
      dead = "its reply key " + t.fields[1] + " cannot take the answer: " + e.reply();
    }
  }
  const std::string id = t.fields.size() == 4 && all_digits(t.fields[0]) ? t.fields[0] : "?";
  if (!dead.empty()) {
    const std::string not_kept = dead_letter(*redis_, keys_, t.entry.job, dead, "agent " + name_);
    retire(*redis_, keys_, t.entry.id);
    log("agent " + name_ + ": job " + id + " moved to the dead letters: " + dead +
        (not_kept.empty() ? "" : " (not recorded: " + not_kept + ")"));
    return;
  }
  retire(*redis_, keys_, t.entry.id);
  ++answered_;
  count_outcome(t.result);
  log("agent " + name_ + ": job " + id + " " + t.what + ": " + t.result.status +
      (t.result.status == "ok" ? "" : " (" + t.result.error + ")"));
}

// The agent's counts in its registration, and quarantine: a worker that died or hung (the outcome
// inferred, not reported) on candidate after candidate points at the device, not the candidates.
void Agent::count_outcome(const MeasureResult& result) {
  ++done_;
  if (result.status != "ok") ++failed_;
  failures_in_row_ = result.reported ? 0 : failures_in_row_ + 1;
  if (options_.quarantine_after > 0 && failures_in_row_ >= options_.quarantine_after) {
    quarantined_ = "its measuring worker died or hung on " + std::to_string(failures_in_row_) +
                   " candidates in a row (last: " + result.status + ": " + result.error + ")";
  }
  try {
    redis_->command({"HSET", keys_.agent(name_), "seen", unix_time(), "done", std::to_string(done_),
                     "failed", std::to_string(failed_), "quarantined", quarantined_});
  } catch (const BrokerRefused& e) {
    log("agent " + name_ + ": registration not updated: " + e.what());
  }
}

int Agent::serve() {
  join(true);
  std::atomic<bool> done{false};
  std::thread heartbeat([&] { keep_heartbeat(done); });
  struct StopHeartbeat {
    std::atomic<bool>& done;
    std::thread& t;
    ~StopHeartbeat() {
      done = true;
      t.join();
    }
  } stop_heartbeat{done, heartbeat};
  log("agent " + name_ + ": serving " + broker_.text() +
      (devices_.empty() ? "" : " with " + devices_));
  // A job examined but not yet answered when the connection broke: answered after reconnecting.
  std::optional<Taken> unanswered;
  bool broken = false;
  while ((options_.max_jobs <= 0 || answered_ < options_.max_jobs) &&
         !(options_.stop && options_.stop->load()) && quarantined_.empty()) {
    try {
      if (broken) {
        redis_ = connect_retrying(broker_, options_.stop);
        broken = false;
        join(false);
        own_pending_ = !unanswered;  // else its own pending entry is the one it holds
      }
      if (!unanswered) {
        const std::optional<Entry> entry = next_entry();
        if (!entry) continue;
        unanswered = examine(*entry);
      }
      finish(*unanswered);
      unanswered.reset();
    } catch (const BrokerLost& e) {
      log("agent " + name_ + ": " + e.what() + "; reconnecting");
      broken = true;
    } catch (const BrokerRefused& e) {
      // The pool's own keys hold something unexpected (not one job's content): said, and tried
      // again a second later rather than spinning.
      log("agent " + name_ + ": " + e.what() + "; trying again");
      unanswered.reset();
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  if (!quarantined_.empty()) {
    log("agent " + name_ + ": quarantined: " + quarantined_ + "; it leaves the queue");
  }
  redis_->command({"DEL", keys_.heartbeat(name_)});
  redis_->command({"SREM", keys_.agents(), name_});
  return answered_;
}

}  // namespace

int serve_farm_agent(const AgentOptions& options) {
  Agent agent(options);
  return agent.serve();
}

namespace {

// One registered agent as the server holds it (every field untrusted; unparsable numbers stay
// unknown).
FarmAgentStatus agent_status(RedisConnection& redis, const Keys& k, const std::string& name,
                             long long now) {
  FarmAgentStatus a;
  a.name = name;
  a.alive = redis.command({"EXISTS", k.heartbeat(name)}).integer > 0;
  std::vector<std::string> v;
  try {
    v = redis
            .command({"HMGET", k.agent(name), "device", "driver", "engine", "targets", "seen",
                      "done", "failed", "quarantined", "plugins"})
            .elements;
  } catch (const BrokerRefused& e) {
    a.quarantined = "registration unreadable: " + e.reply();
  }
  if (v.size() != 9) return a;
  a.device = v[0];
  a.driver = v[1];
  a.engine = v[2];
  a.targets = v[3];
  auto number = [](const std::string& s) -> long long {
    return all_digits(s) && s.size() <= 18 ? std::stoll(s) : -1;
  };
  if (number(v[4]) >= 0) a.last_seen_s = static_cast<double>(now - number(v[4]));
  a.done = std::max(0LL, number(v[5]));
  a.failed = std::max(0LL, number(v[6]));
  a.quarantined = v[7];
  a.plugins = v[8];
  return a;
}

// The pool's newest dead letters (at most `count`) and how many it keeps.
void read_dead_letters(RedisConnection& redis, const Keys& k, size_t count, FarmStatus* status) {
  try {
    status->dead_letters = redis.command({"XLEN", k.dead()}).integer;
    const RedisConnection::Reply newest =
        redis.command({"XREVRANGE", k.dead(), "+", "-", "COUNT", std::to_string(count)});
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    for (const RedisConnection::Reply& e : newest.items) {
      if (e.items.size() != 2) continue;
      std::map<std::string, std::string> f = fields_of(e.items[1]);
      FarmDeadLetter d;
      d.id = e.items[0].str;
      const std::string ms = d.id.substr(0, d.id.find('-'));
      if (all_digits(ms) && ms.size() <= 18) {
        d.age_s = static_cast<double>(now_ms - std::stoll(ms)) / 1000.0;
      }
      d.agent = f["agent"];
      d.reason = f["reason"];
      d.job = f["job"];
      status->dead.push_back(std::move(d));
    }
  } catch (const BrokerRefused& e) {
    status->unreadable.push_back(k.dead() + ": " + e.reply());
  }
}

}  // namespace

FarmStatus farm_status(const BrokerAddress& broker) {
  RedisConnection redis(broker);
  const Keys k(broker);
  FarmStatus status;
  status.broker = broker.text();
  // Jobs in the stream that no agent holds: the stream keeps only unanswered jobs, and the
  // group's pending list those an agent took.
  try {
    status.queued = redis.command({"XLEN", k.jobs()}).integer;
    const RedisConnection::Reply held = redis.command({"XPENDING", k.jobs(), kGroup});
    if (!held.items.empty()) status.queued -= held.items[0].integer;
  } catch (const BrokerRefused& e) {
    if (!e.is("NOGROUP")) status.unreadable.push_back(k.jobs() + ": " + e.reply());
  }
  // Registered agents: those in the pool's set and those that left a registration (quarantined
  // or stopped ones stay visible until it expires).
  std::set<std::string> names;
  try {
    for (const std::string& n : redis.command({"SMEMBERS", k.agents()}).elements) names.insert(n);
  } catch (const BrokerRefused& e) {
    status.unreadable.push_back(k.agents() + ": " + e.reply());
  }
  // KEYS walks the whole key space: fine for a farm server, whose keys are the farm's own.
  for (const std::string& key : redis.command({"KEYS", k.agent("*")}).elements) {
    names.insert(key.substr(k.agent("").size()));
  }
  const long long now = std::stoll(unix_time());
  for (const std::string& n : names) status.agents.push_back(agent_status(redis, k, n, now));
  read_dead_letters(redis, k, 20, &status);
  return status;
}

std::vector<std::string> farm_pools(const BrokerAddress& broker) {
  RedisConnection redis(broker);
  std::set<std::string> pools;
  for (const char* suffix : {":agents", ":jobs", ":dead"}) {
    for (const std::string& key :
         redis.command({"KEYS", std::string("tessera:farm:*") + suffix}).elements) {
      const std::string inner = key.substr(13, key.size() - 13 - std::strlen(suffix));
      if (farm_key_problem(inner).empty()) pools.insert(inner);
    }
  }
  return {pools.begin(), pools.end()};
}

std::string choose_farm_pool(const BrokerAddress& broker, const std::string& device_pool,
                             const std::vector<std::string>& plugins, std::string* why) {
  // Per pool with a live agent: whether one of them measures every plugin, and what they are.
  struct Live {
    bool fits = false;
    std::string text;
  };
  std::map<std::string, Live> live;
  BrokerAddress at = broker;
  for (const std::string& pool : farm_pools(broker)) {
    at.pool = pool;
    for (const FarmAgentStatus& a : farm_status(at).agents) {
      if (!a.alive || !a.quarantined.empty()) continue;
      bool fits = true;  // an agent without targets measures any job's
      if (!a.targets.empty()) {
        for (const std::string& plugin : plugins) {
          bool measured = false;
          for (size_t start = 0; start <= a.targets.size();) {
            const size_t end = std::min(a.targets.find(',', start), a.targets.size());
            measured = measured ||
                       detail::split_target(a.targets.substr(start, end - start)).first == plugin;
            start = end + 1;
          }
          fits = fits && measured;
        }
      }
      Live& l = live[pool];
      l.fits = l.fits || fits;
      l.text += (l.text.empty() ? "" : "; ") + a.name + " on '" +
                (a.device.empty() ? "any device" : a.device) + "' measuring " +
                (a.targets.empty() ? "any target" : a.targets);
    }
  }
  if (!device_pool.empty() && (live.count(device_pool) || live.empty())) {
    *why = live.empty() ? "no agent is alive yet; the pool agents of the device it tunes for join"
                        : "the pool of the device it tunes for";
    return device_pool;
  }
  std::vector<std::string> fitting;
  std::string names;
  for (const auto& [pool, l] : live) {
    if (l.fits) fitting.push_back(pool);
    names += "\n  " + pool + ": " + escaped(l.text);
  }
  std::string wanted;
  for (const std::string& p : plugins) wanted += (wanted.empty() ? "" : ", ") + p;
  if (fitting.size() == 1) {
    *why = "the one pool whose live agents measure " + wanted;
    return fitting[0];
  }
  const std::string device_text = device_pool.empty() ? "the device it tunes for names no pool"
                                                      : "the pool of the device it tunes for ('" +
                                                            device_pool + "') has no live agent";
  throw Error("farm broker " + broker.text() + ": no key given; " + device_text + " and " +
              std::to_string(fitting.size()) + " live pool(s) measure " + wanted +
              "; name the pool with --key (or HOST:PORT/KEY). Live pools:" +
              (names.empty() ? std::string(" none") : names));
}

}  // namespace tessera::tune
