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
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "tessera/error.hpp"
#include "tessera/file_util.hpp"

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

BrokerAddress BrokerAddress::parse(const std::string& text) {
  BrokerAddress a;
  std::string rest = text;
  auto bad = [&](const std::string& why) {
    return Error("farm broker '" + escaped(text) + "': " + why +
                 " (expected HOST:PORT[/POOL] or unix:PATH[/POOL])");
  };
  if (rest.rfind("unix:", 0) == 0) {
    rest = rest.substr(5);
    // unix:/run/redis.sock/pool: the pool is what follows a ".sock" or the last '/' after it.
    const size_t sock = rest.find(".sock");
    const size_t slash = rest.find('/', sock == std::string::npos ? 0 : sock);
    if (sock != std::string::npos && slash != std::string::npos) {
      a.pool = rest.substr(slash + 1);
      rest = rest.substr(0, slash);
    }
    if (rest.empty() || rest[0] != '/') throw bad("the socket path must be absolute");
    a.socket_path = rest;
  } else {
    const size_t slash = rest.find('/');
    if (slash != std::string::npos) {
      a.pool = rest.substr(slash + 1);
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
  if (a.pool.empty()) throw bad("empty pool name");
  for (char c : a.pool) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      throw bad("pool name '" + escaped(a.pool) + "' may hold letters, digits and - _ . only");
    }
  }
  return a;
}

std::string BrokerAddress::text() const {
  return (socket_path.empty() ? host + ":" + std::to_string(port) : "unix:" + socket_path) + "/" +
         pool;
}

// One hiredis connection; every failure is a tessera::Error naming the server and the command.
class RedisConnection {
 public:
  struct Reply {
    bool nil = true;
    std::string str;
    long long integer = 0;
    std::vector<std::string> elements;  // of an array reply (nil elements as "")
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
      throw Error("farm broker " + where_ + ": cannot connect: " + why);
    }
    // Blocking commands wait at most a few seconds; a server that answers nothing for longer than
    // this is treated as gone.
    const timeval io_timeout{30, 0};
    redisSetTimeout(ctx_, io_timeout);
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
      throw Error("farm broker " + where_ + ": " + args[0] +
                  " failed: " + (ctx_->err ? ctx_->errstr : "no reply"));
    }
    Reply out;
    const int type = r->type;
    if (type == REDIS_REPLY_ERROR) {
      const std::string why(r->str, r->len);
      freeReplyObject(r);
      throw Error("farm broker " + where_ + ": " + args[0] + ": " + why);
    }
    if (type == REDIS_REPLY_STRING || type == REDIS_REPLY_STATUS) {
      out.nil = false;
      out.str.assign(r->str, r->len);
    } else if (type == REDIS_REPLY_INTEGER) {
      out.nil = false;
      out.integer = r->integer;
    } else if (type == REDIS_REPLY_ARRAY) {
      out.nil = false;
      for (size_t i = 0; i < r->elements; ++i) {
        const redisReply* e = r->element[i];
        out.elements.emplace_back(e->type == REDIS_REPLY_STRING ? std::string(e->str, e->len)
                                                                : std::string());
      }
    }
    freeReplyObject(r);
    return out;
  }

 private:
  std::string where_;
  redisContext* ctx_ = nullptr;
};

namespace {

struct Keys {
  std::string prefix;
  explicit Keys(const BrokerAddress& b) : prefix("tessera:farm:" + b.pool + ":") {}
  std::string jobs() const { return prefix + "jobs"; }
  std::string agents() const { return prefix + "agents"; }
  std::string processing(const std::string& agent) const { return prefix + "processing:" + agent; }
  std::string heartbeat(const std::string& agent) const { return prefix + "heartbeat:" + agent; }
  std::string model(const std::string& key) const { return prefix + "model:" + key; }
  std::string reply(const std::string& run) const { return prefix + "reply:" + run; }
};

std::string ms_text(double seconds) {
  return std::to_string(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
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

int FarmClient::agents_alive() {
  const Keys k(broker_);
  int alive = 0;
  for (const std::string& agent : redis_->command({"SMEMBERS", k.agents()}).elements) {
    if (redis_->command({"EXISTS", k.heartbeat(agent)}).integer > 0) ++alive;
  }
  return alive;
}

std::string FarmClient::upload_model(const std::string& path) {
  const std::string bytes = read_file(path, "model", kMaxModelBytes);
  const std::string key = content_key(bytes);
  const Keys k(broker_);
  if (std::find(uploaded_.begin(), uploaded_.end(), key) == uploaded_.end()) {
    // SET NX: agents may already hold it from another tuner; EXPIRE keeps it a week from now.
    redis_->command({"SET", k.model(key), bytes, "EX", std::to_string(kModelTtlS), "NX"});
    redis_->command({"EXPIRE", k.model(key), std::to_string(kModelTtlS)});
    uploaded_.push_back(key);
  }
  return key;
}

std::vector<MeasureResult> FarmClient::measure(const std::vector<MeasureRequest>& requests) {
  const Keys k(broker_);
  const std::string reply = k.reply(run_id_);
  std::vector<MeasureResult> out(requests.size());
  std::map<std::string, size_t> pending;  // job id -> request index
  std::map<std::string, std::string> payload_of;
  std::vector<std::string> push = {"LPUSH", k.jobs()};
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::string id = std::to_string(next_job_++);
    const std::string payload = id + "\t" + reply + "\t" + upload_model(requests[i].model) + "\t" +
                                encode_request(requests[i]);
    pending[id] = i;
    payload_of[id] = payload;
    push.push_back(payload);
  }
  if (pending.empty()) return out;
  redis_->command(push);
  std::map<std::string, int> losses;
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto last_alive = now();
  auto last_check = now() - std::chrono::hours(1);
  while (!pending.empty()) {
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
    const Keys keys(broker_);
    for (const std::string& agent : redis_->command({"SMEMBERS", keys.agents()}).elements) {
      if (redis_->command({"EXISTS", keys.heartbeat(agent)}).integer > 0) continue;
      for (const std::string& job :
           redis_->command({"LRANGE", keys.processing(agent), "0", "-1"}).elements) {
        if (redis_->command({"LREM", keys.processing(agent), "1", job}).integer == 0) continue;
        const std::vector<std::string> f = split_fields(job, 2);
        auto it = f.empty() ? pending.end() : pending.find(f[0]);
        if (it != pending.end() && ++losses[f[0]] > kMaxFarmLosses) {
          MeasureResult& m = out[it->second];
          m.status = "crash";
          m.reported = false;
          m.error = "farm: lost " + std::to_string(losses[f[0]]) +
                    " times by agents that died while measuring it (last: " + agent + ")";
          pending.erase(it);
          continue;
        }
        redis_->command({"RPUSH", keys.jobs(), job});
        ++recovered_;
      }
      redis_->command({"SREM", keys.agents(), agent});
    }
    if (agents_alive() > 0) {
      last_alive = now();
    } else if (std::chrono::duration<double>(now() - last_alive).count() > agent_wait_s_) {
      // Our jobs leave the queue: nobody will measure them for this run.
      for (const auto& [id, i] : pending) redis_->command({"LREM", k.jobs(), "1", payload_of[id]});
      throw Error("farm broker " + broker_.text() + ": no agent alive for " +
                  std::to_string(static_cast<int>(agent_wait_s_)) + " s with " +
                  std::to_string(pending.size()) +
                  " measurement(s) pending; start agents on the devices with `tessera agent "
                  "--broker " +
                  broker_.text() + "`");
    }
  }
  return out;
}

int serve_farm_agent(const AgentOptions& options) {
  const Keys k(options.broker);
  const std::string name =
      options.name.empty() ? host_name() + "-" + std::to_string(getpid()) : options.name;
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  if (options.cache_dir.empty()) throw Error("farm agent: a cache directory is required");
  const std::filesystem::path models = std::filesystem::path(options.cache_dir) / "models";
  std::filesystem::create_directories(models);
  // The worker first: an agent joins the pool only once it can measure.
  MeasureWorker worker(options.worker_command, options.persistent_worker);
  worker.check_start();
  RedisConnection redis(options.broker);
  const std::string lease_ms = ms_text(options.lease_s);
  redis.command({"SET", k.heartbeat(name), "1", "PX", lease_ms});
  redis.command({"SADD", k.agents(), name});
  // A previous life under this name may have died holding a job: hand it back first.
  for (const std::string& job : redis.command({"LRANGE", k.processing(name), "0", "-1"}).elements) {
    if (redis.command({"LREM", k.processing(name), "1", job}).integer > 0) {
      redis.command({"RPUSH", k.jobs(), job});
      log("agent " + name + ": handed back a job a previous run of this agent held");
    }
  }
  // The heartbeat lives on its own connection and thread, so a long measurement keeps it.
  std::atomic<bool> done{false};
  std::thread heartbeat([&] {
    try {
      RedisConnection beat(options.broker);
      const auto period = std::chrono::duration<double>(options.lease_s / 3);
      while (!done) {
        beat.command({"SET", k.heartbeat(name), "1", "PX", lease_ms});
        const auto until = std::chrono::steady_clock::now() + period;
        while (!done && std::chrono::steady_clock::now() < until) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
    } catch (const std::exception& e) {
      // Without a heartbeat the tuner hands our jobs to other agents: a duplicate answer at worst.
      log("agent " + name + ": heartbeat stopped: " + e.what());
    }
  });
  struct Join {
    std::atomic<bool>& done;
    std::thread& t;
    ~Join() {
      done = true;
      t.join();
    }
  } join{done, heartbeat};

  log("agent " + name + ": serving " + options.broker.text());
  int answered = 0;
  while ((options.max_jobs <= 0 || answered < options.max_jobs) &&
         !(options.stop && options.stop->load())) {
    const RedisConnection::Reply r =
        redis.command({"BLMOVE", k.jobs(), k.processing(name), "RIGHT", "LEFT", "1"});
    if (r.nil) continue;
    const std::string& job = r.str;
    const std::vector<std::string> f = split_fields(job, 4);
    MeasureResult result;
    std::optional<MeasureRequest> req = f.empty() ? std::nullopt : decode_request(f[3]);
    if (!req) {
      result.status = "crash";
      result.error = "farm agent " + name + ": malformed job";
    } else {
      const std::filesystem::path model = models / (f[2] + ".onnx");
      if (!std::filesystem::exists(model)) {
        const RedisConnection::Reply bytes = redis.command({"GET", k.model(f[2])});
        if (!bytes.nil) {
          // Written whole, then renamed: a second agent on this cache never reads half a file.
          const std::string tmp = model.string() + ".tmp" + std::to_string(getpid());
          std::ofstream(tmp, std::ios::binary)
              .write(bytes.str.data(), static_cast<std::streamsize>(bytes.str.size()));
          std::filesystem::rename(tmp, model);
        }
      }
      if (!std::filesystem::exists(model)) {
        result.status = "crash";
        result.error = "farm agent " + name + ": model " + f[2] + " is not on the server";
      } else {
        req->model = model.string();
        req->cache_dir = (std::filesystem::path(options.cache_dir) / "kernels").string();
        result = worker.measure(*req);
      }
    }
    if (f.size() == 4 && !f[1].empty()) {
      redis.command({"RPUSH", f[1], f[0] + "\t" + encode_result(result)});
      redis.command({"EXPIRE", f[1], std::to_string(kReplyTtlS)});
    }
    redis.command({"LREM", k.processing(name), "1", job});
    ++answered;
    log("agent " + name + ": job " + (f.empty() ? "?" : f[0]) + " " +
        (req ? req->node + " " + req->schedule : "") + ": " + result.status);
  }
  redis.command({"DEL", k.heartbeat(name)});
  redis.command({"SREM", k.agents(), name});
  return answered;
}

}  // namespace tessera::tune
