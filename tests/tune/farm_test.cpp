// The tuning farm against a real redis-server (started per test on 127.0.0.1, a free port) and
// real agents (`tessera agent` processes) measuring the one-Relu model on the tunetest plugin.
// Oracles: the same requests measured by a local worker (statuses, errors, the reference check),
// the device the plugin names, the server's own view through redis-cli (pending lists, dead
// letters, reply lists), and for the agents' parallelism a barrier in the plugin that lets a run
// end only once every agent's worker is running (a verdict no machine's speed changes). Waits are
// for states (an agent holding a job, a heartbeat) with generous deadlines, never fixed sleeps.
// One test puts the server behind TLS (a TLS-only redis-server and a stunnel client, from
// Debian's stunnel4).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/farm.hpp"
#include "tessera/pack.hpp"
#include "tessera/tuner.hpp"
#include "test_requirements.hpp"
#include "tune_test_util.hpp"

extern char** environ;

namespace tessera::tune {
namespace {

using test::kTessera;
using test::relu_model;
using test::temp_path;
using test::worker_command;

// `name` on $PATH, or "".
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::filesystem::path p = std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
    start = end + 1;
  }
  return "";
}

// Starts argv with stdout and stderr into `log`, in this process's environment.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice for port 0).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// What a shell command writes to stdout.
std::string command_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

// One redis-cli command's output (the test's own view of the server, outside the farm's code).
std::string redis_cli(int port, const std::string& args) {
  return command_output(find_program("redis-cli") + " -p " + std::to_string(port) + " " + args);
}

void end_process(pid_t pid, int sig) {
  if (pid <= 0) return;
  kill(pid, sig);
  waitpid(pid, nullptr, 0);
}

// Polls `done` every 10 ms until it holds or `seconds` passed; returns its last answer. The
// deadline only keeps a broken run from hanging: no verdict depends on how long it took.
template <class Done>
bool wait_until(Done done, double seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The lines of a text, without their newlines.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

MeasureRequest relu_request(int64_t mode, int64_t block) {
  MeasureRequest r;
  r.model = relu_model();
  r.node = "relu1";
  r.target = "tunetest";
  r.schedule = "relu.test";
  r.knobs = {{"mode", mode}, {"block", block}};
  r.repeats = 1;
  r.timeout_s = 20;
  return r;
}

class Farm : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = find_program("redis-server");
    if (server_.empty() || find_program("redis-cli").empty()) {
      TESSERA_SKIP_WITHOUT("redis-server") << "apt-get install redis-server";
    }
    dir_ = temp_path("farm");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    port_ = free_port();
    ASSERT_GT(port_, 0);
    start_server();
    setenv("TESSERA_PLUGIN_PATH", TESSERA_TUNE_TEST_PLUGIN_DIR, 1);
  }
  void TearDown() override {
    for (const auto& [name, pid] : agents_) end_process(pid, SIGKILL);
    end_process(redis_, SIGTERM);
    unsetenv("TESSERA_PLUGIN_PATH");
    unsetenv("TESSERA_TUNETEST_SLEEP_MS");
    unsetenv("TESSERA_TUNETEST_FAULTS");
    unsetenv("TESSERA_TUNETEST_BARRIER");
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // A redis-server on 127.0.0.1:port_ without persistence (a restart loses every key).
  void start_server() {
    redis_ = spawn({server_, "--bind", "127.0.0.1", "--port", std::to_string(port_), "--save", "",
                    "--appendonly", "no"},
                   dir_ + "/redis.log");
    ASSERT_GT(redis_, 0) << "could not start " << server_;
    wait_until([&] { return redis_cli(port_, "PING") == "PONG\n"; });
    ASSERT_EQ(redis_cli(port_, "PING"), "PONG\n") << "redis-server did not answer on " << port_;
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  std::string broker() const { return url() + "/tests"; }
  BrokerAddress address() const { return BrokerAddress::parse(broker()); }
  void start_agent(const std::string& name, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {kTessera,  "agent", "--broker",    broker(),
                                     "--name",  name,    "--cache-dir", dir_ + "/cache-" + name,
                                     "--lease", "0.6"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    agents_[name] = spawn(argv, dir_ + "/agent-" + name + ".log");
    ASSERT_GT(agents_[name], 0);
  }
  // Waits until `n` agents keep a heartbeat (each starts its measuring worker first).
  void wait_for_agents(int n, const BrokerAddress& where) {
    FarmClient client(where);
    wait_until([&] { return client.agents_alive() == n; }, 120);
    ASSERT_EQ(client.agents_alive(), n);
  }
  void wait_for_agents(int n) { wait_for_agents(n, address()); }
  // A key of the "tests" pool.
  static std::string pool_key(const std::string& what) { return "tessera:farm:tests:" + what; }
  // The job stream entries `agent` holds unacknowledged (XPENDING's lines: id, consumer, idle
  // time, deliveries per entry).
  std::vector<std::string> held_by(const std::string& agent) const {
    const std::vector<std::string> lines =
        lines_of(redis_cli(port_, "XPENDING " + pool_key("jobs") + " agents - + 100 " + agent));
    std::vector<std::string> ids;
    for (size_t i = 0; i + 3 < lines.size(); i += 4) ids.push_back(lines[i]);
    return ids;
  }
  // Waits until `agent` holds an entry other than `except`; returns it ("" when none came).
  std::string wait_until_holding(const std::string& agent, const std::string& except = "") const {
    std::string held;
    wait_until([&] {
      for (const std::string& id : held_by(agent)) {
        if (id != except) held = id;
      }
      return !held.empty();
    });
    return held;
  }
  // Adds a job to the pool's stream as written, control characters included (redis-cli -x reads
  // the last argument from stdin, byte for byte).
  void add_raw_job(const std::string& job) const {
    const std::string path = dir_ + "/job.bin";
    std::ofstream(path, std::ios::binary) << job;
    command_output(find_program("redis-cli") + " -p " + std::to_string(port_) + " -x XADD " +
                   pool_key("jobs") + " '*' job < " + path);
  }
  // The answers on reply list `list` by job id, once `n` came (or a minute passed).
  std::map<std::string, std::string> answers_on(const std::string& list, size_t n) const {
    std::map<std::string, std::string> out;
    wait_until([&] {
      const std::string a = redis_cli(port_, "LPOP " + list);
      if (a.size() > 1) out[a.substr(0, a.find('\t'))] = a.substr(0, a.size() - 1);  // no '\n'
      return out.size() >= n;
    });
    return out;
  }
  // The answers the agents of `where` counted in their registrations, once they reach `n` (an
  // agent counts an answer just after the tuner may have read it) or a minute passed.
  int64_t done_in(const BrokerAddress& where, int64_t n) const {
    int64_t done = 0;
    wait_until([&] {
      done = 0;
      for (const FarmAgentStatus& a : farm_status(where).agents) done += a.done;
      return done >= n;
    });
    return done;
  }
  // Whether agent `name` still runs (it did not exit).
  bool agent_running(const std::string& name) {
    int status = 0;
    return waitpid(agents_[name], &status, WNOHANG) == 0;
  }
  // A good job measured by the farm as a local worker measures it: the agent still serves.
  void expect_serving_like_a_local_worker() {
    const MeasureRequest request = relu_request(0, 1);
    const std::vector<MeasureResult> farm = FarmClient(address()).measure({request});
    const MeasureResult local = measure(worker_command(kTessera), request);
    ASSERT_EQ(farm.size(), 1u);
    EXPECT_EQ(farm[0].status, "ok") << farm[0].error;
    EXPECT_EQ(farm[0].status, local.status);
    EXPECT_EQ(farm[0].max_error, local.max_error);
    EXPECT_EQ(farm[0].device, "TuneTest CPU");
  }
  std::string server_, dir_;
  int port_ = -1;
  pid_t redis_ = -1;
  std::map<std::string, pid_t> agents_;
};

TEST(FarmAddress, ParsesHostPortSocketAndPoolAndRefusesTheRest) {
  const BrokerAddress a = BrokerAddress::parse("farm.lab:6379/adreno-740");
  EXPECT_EQ(a.host, "farm.lab");
  EXPECT_EQ(a.port, 6379);
  EXPECT_EQ(a.pool, "adreno-740");
  EXPECT_EQ(a.text(), "redis://farm.lab:6379/adreno-740");
  const BrokerAddress u = BrokerAddress::parse("unix:/run/redis/redis.sock/mali");
  EXPECT_EQ(u.socket_path, "/run/redis/redis.sock");
  EXPECT_EQ(u.pool, "mali");
  EXPECT_EQ(BrokerAddress::parse("10.0.0.2:7000").pool, "default");
  EXPECT_FALSE(BrokerAddress::parse("10.0.0.2:7000").pool_given);
  const BrokerAddress r = BrokerAddress::parse("redis://tuner:s3cret@farm.lab:6380/mali-g78");
  EXPECT_EQ(r.user, "tuner");
  EXPECT_EQ(r.password, "s3cret");
  EXPECT_EQ(r.port, 6380);
  EXPECT_EQ(r.pool, "mali-g78");
  EXPECT_EQ(r.text(), "redis://farm.lab:6380/mali-g78");  // never the password
  try {
    BrokerAddress::parse("redis://:s3cret@farm.lab:99999/k");
    ADD_FAILURE() << "port 99999 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("redis://:***@farm.lab:99999/k"), std::string::npos)
        << e.what();
  }
  // A password in a refused URL is masked there too.
  try {
    BrokerAddress::parse("rediss://tuner:s3cret@farm.lab:6379/k");
    ADD_FAILURE() << "rediss:// accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rediss://tuner:***@farm.lab:6379/k"), std::string::npos)
        << e.what();
  }
  const std::map<std::string, std::string> bad = {
      {"localhost", "no host and port"},
      {"h:99999", "port '99999' is not a number in 1..65535"},
      {"h:12x", "port '12x'"},
      {"unix:relative.sock", "must be absolute"},
      {"h:1/po ol", "key 'po ol' holds other characters"},
      {"h:1/", "an empty key"},
      {"rediss://farm.lab:6379/k", "TLS (rediss://) is not available"},
      {"http://farm.lab:6379/k", "unknown scheme 'http://'"}};
  for (const auto& [text, why] : bad) {
    try {
      BrokerAddress::parse(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
}

TEST(FarmAddress, AnUnreachableServerIsAnErrorNamingIt) {
  try {
    FarmClient client(BrokerAddress::parse("unix:/nonexistent/tessera-farm.sock/p"));
    ADD_FAILURE() << "connected to nothing";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unix:/nonexistent/tessera-farm.sock/p: cannot connect"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Farm, AgentsMeasureAsALocalWorkerDoesAndNameTheirDevice) {
  start_agent("a1");
  start_agent("a2");
  wait_for_agents(2);
  std::vector<MeasureRequest> requests;
  for (int64_t mode : {0, 1, 2}) {
    for (int64_t block : {1, 2}) requests.push_back(relu_request(mode, block));
  }
  FarmClient client(address());
  const std::vector<MeasureResult> farm = client.measure(requests);
  ASSERT_EQ(farm.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const MeasureResult local = measure(worker_command(kTessera), requests[i]);
    SCOPED_TRACE("mode " + std::to_string(requests[i].knobs[0].second) + " block " +
                 std::to_string(requests[i].knobs[1].second));
    EXPECT_EQ(farm[i].status, local.status);
    EXPECT_EQ(farm[i].error, local.error);
    EXPECT_EQ(farm[i].max_error, local.max_error);  // both against the reference kernel
    if (farm[i].status == "ok") {
      EXPECT_GT(farm[i].median_us, 0);
    }
    EXPECT_EQ(farm[i].device, "TuneTest CPU");
    EXPECT_EQ(farm[i].driver, "1.0");
  }
  EXPECT_EQ(farm[4].status, "compile");  // mode 2 never compiles
  EXPECT_EQ(client.jobs_recovered(), 0);
}

// Four agents measure four candidates at once: every run first waits in the plugin until the
// workers of all four agents are inside a run (a barrier of 15 s at most, then the run fails), so
// the batch comes back ok only if they ran at the same time, however fast or slow the machine.
// The throughput is printed (each run then sleeps 100 ms: wall time, no CPU), not judged.
TEST_F(Farm, FourAgentsMeasureFourCandidatesAtOnce) {
  const std::string barrier = dir_ + "/barrier";
  std::filesystem::create_directories(barrier);
  setenv("TESSERA_TUNETEST_BARRIER", (barrier + ":4").c_str(), 1);
  setenv("TESSERA_TUNETEST_SLEEP_MS", "100", 1);
  for (const char* name : {"a1", "a2", "a3", "a4"}) start_agent(name);
  wait_for_agents(4);
  const std::vector<MeasureRequest> requests(16, relu_request(0, 1));
  FarmClient client(address());
  const auto start = std::chrono::steady_clock::now();
  const std::vector<MeasureResult> results = client.measure(requests);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(results.size(), requests.size());
  for (const MeasureResult& r : results) EXPECT_EQ(r.status, "ok") << r.error;
  // Four workers, one per agent, met at the barrier; every agent answered its share.
  size_t marks = 0;
  for (const auto& e : std::filesystem::directory_iterator(barrier)) marks += e.is_regular_file();
  EXPECT_EQ(marks, 4u);
  EXPECT_EQ(done_in(address(), 16), 16);
  for (const FarmAgentStatus& a : farm_status(address()).agents) EXPECT_GE(a.done, 1) << a.name;
  std::printf("farm: 4 agents: %zu measurements in %.2f s, %.2f per second\n", results.size(), s,
              static_cast<double>(results.size()) / s);
}

TEST_F(Farm, AKilledAgentsCandidateIsMeasuredByAnotherAndARestartedAgentServesAgain) {
  setenv("TESSERA_TUNETEST_SLEEP_MS", "250", 1);
  start_agent("a1");
  start_agent("a2");
  wait_for_agents(2);
  const std::vector<MeasureRequest> requests(6, relu_request(0, 1));
  FarmClient client(address());
  std::vector<MeasureResult> results;
  std::thread tuner([&] { results = client.measure(requests); });
  // a1 dies while it holds a job (2 runs of 250 ms each).
  const std::string held = wait_until_holding("a1");
  EXPECT_FALSE(held.empty()) << "a1 took no job";
  end_process(agents_["a1"], SIGKILL);
  agents_.erase("a1");
  tuner.join();
  ASSERT_EQ(results.size(), requests.size());
  for (const MeasureResult& r : results) EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_GE(client.jobs_recovered(), 1);
  // The same name again: it joins the pool and measures.
  start_agent("a1");
  wait_for_agents(2);
  for (const MeasureResult& r : client.measure(requests)) EXPECT_EQ(r.status, "ok") << r.error;
}

// The resumability check on the test device: a tune whose agent is killed and restarted
// mid-run writes the pack a local tune writes (configs differ by 2x or more in time, so the pack
// does not depend on noise) and logs the same outcome per config.
TEST_F(Farm, ATuningRunWithAnAgentKilledAndRestartedWritesTheLocalRunsPack) {
  setenv("TESSERA_TUNETEST_SLEEP_MS", "40", 1);
  struct Outcome {
    std::map<std::string, std::string> status;  // knobs -> status of the search's records
    std::vector<std::string> pack;              // workload, schedule and knobs per entry
  };
  auto tune_relu = [&](const std::string& farm) {
    TuneOptions o;
    o.model = relu_model();
    o.targets = {"tunetest", "reference"};
    o.trials = 6;
    o.tuner = "grid";
    o.repeats = 1;
    o.timeout_s = 10;
    o.verify = 3;
    o.worker_command = worker_command(kTessera);
    o.farm = farm;
    const TuneReport report = run_tuning(o);
    Outcome out;
    for (const LogRecord& r : report.records) {
      EXPECT_EQ(r.device, "TuneTest CPU");
      if (!r.stage.empty()) continue;
      std::string key;
      for (const auto& [name, value] : r.knobs) key += name + "=" + std::to_string(value) + " ";
      out.status[key] = r.status;
    }
    const Pack pack =
        pack_from_records(report.records, "tunetest", report.devices.at("tunetest"), "farm test");
    for (const PackEntry& e : pack.entries) {
      std::string text = e.workload + " " + e.schedule;
      for (const Knob& k : e.knobs) text += " " + k.name + "=" + std::to_string(k.value);
      out.pack.push_back(text);
    }
    return out;
  };
  start_agent("a1");
  start_agent("a2");
  wait_for_agents(2);
  Outcome farm;
  std::thread tuner([&] { farm = tune_relu(broker()); });
  EXPECT_FALSE(wait_until_holding("a1").empty()) << "a1 took no job";
  end_process(agents_["a1"], SIGKILL);
  start_agent("a1");
  tuner.join();
  const Outcome local = tune_relu("");
  EXPECT_EQ(farm.status.size(), 6u);
  EXPECT_EQ(farm.status, local.status);
  ASSERT_EQ(local.pack.size(), 1u);
  EXPECT_NE(local.pack[0].find("mode=0 block=1"), std::string::npos) << local.pack[0];
  EXPECT_EQ(farm.pack, local.pack);
}

TEST_F(Farm, WithoutAgentsTheRunEndsWithAnErrorNamingTheBroker) {
  FarmClient client(address(), 1.0);
  try {
    client.measure({relu_request(0, 1)});
    ADD_FAILURE() << "measured without agents";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no agent alive for 1 s with 1 measurement(s) pending"), std::string::npos)
        << what;
    EXPECT_NE(what.find("tessera agent --broker " + broker()), std::string::npos) << what;
  }
}

TEST_F(Farm, AnAgentRefusesMalformedAndForeignJobsWithTheReason) {
  start_agent("a1", {"--targets", "tunetest"});
  wait_for_agents(1);
  // Jobs written straight into the queue, as a broken or hostile client could: each answer says
  // why it was refused, and the agent keeps serving.
  const std::string reply = pool_key("reply:t");
  const std::map<std::string, std::string> jobs = {
      {"1", "model key 'not-a-key' is not <size>-<16 hex digits>"},
      {"2", "an unreadable request line"},
      {"3", "target 'mali:any' is not one this agent measures"}};
  add_raw_job("1\t" + reply + "\tnot-a-key\tmodel=m\tnode=n");
  add_raw_job("2\t" + reply + "\t12-0123456789abcdef\t");
  add_raw_job("3\t" + reply +
              "\t12-0123456789abcdef\tmodel=m\tnode=n\ttarget=mali:any\tschedule=s\trepeats=1");
  std::map<std::string, std::string> answers = answers_on(reply, jobs.size());
  ASSERT_EQ(answers.size(), jobs.size());
  for (const auto& [id, why] : jobs) {
    EXPECT_NE(answers[id].find("status=refused"), std::string::npos) << answers[id];
    EXPECT_NE(answers[id].find("farm agent a1 refused " + why), std::string::npos) << answers[id];
  }
  // Well-formed but outside the node's described space: refused by the worker before compiling.
  FarmClient client(address());
  MeasureRequest unknown_schedule = relu_request(0, 1);
  unknown_schedule.schedule = "relu.other";
  MeasureRequest unknown_knob = relu_request(0, 1);
  unknown_knob.knobs.emplace_back("speed", 9);
  MeasureRequest out_of_space = relu_request(0, 7);
  const std::vector<MeasureResult> r =
      client.measure({unknown_schedule, unknown_knob, out_of_space, relu_request(0, 1)});
  EXPECT_EQ(r[0].status, "refused");
  EXPECT_EQ(r[0].error,
            "schedule 'relu.other' is not one the plugin describes for node 'relu1' (relu.test)");
  EXPECT_EQ(r[1].status, "refused");
  EXPECT_EQ(r[1].error, "schedule 'relu.test' has no knob 'speed'");
  EXPECT_EQ(r[2].status, "refused");
  EXPECT_EQ(r[2].error, "knob 'block' = 7 is outside the space of 'relu.test' (1..2)");
  EXPECT_EQ(r[3].status, "ok") << r[3].error;  // still serving
}

TEST_F(Farm, TheTunerAndTheAgentsSurviveTheServerRestartingMidBatch) {
  setenv("TESSERA_TUNETEST_SLEEP_MS", "100", 1);
  start_agent("a1");
  start_agent("a2");
  wait_for_agents(2);
  const std::vector<MeasureRequest> requests(8, relu_request(0, 1));  // 8 x 200 ms over 2 agents
  FarmClient client(address());
  std::vector<MeasureResult> results;
  std::thread tuner([&] { results = client.measure(requests); });
  // Mid-batch: once an agent holds a job.
  EXPECT_TRUE(wait_until([&] { return !held_by("a1").empty() || !held_by("a2").empty(); }));
  end_process(redis_, SIGKILL);  // every key gone: queue, models, heartbeats, replies
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  start_server();
  tuner.join();
  ASSERT_EQ(results.size(), requests.size());
  for (const MeasureResult& r : results) EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_GE(client.reconnects(), 1);
  wait_for_agents(2);  // both agents reconnected and joined again
}

TEST_F(Farm, AnAgentWhoseWorkerKeepsDyingQuarantinesItselfAndStatusShowsIt) {
  setenv("TESSERA_TUNETEST_FAULTS", "1", 1);  // mode 3 aborts the worker at run time
  start_agent("a1", {"--quarantine-after", "2", "--targets", "tunetest"});
  wait_for_agents(1);
  FarmClient client(address(), 2.0);
  const std::vector<MeasureResult> dead = client.measure({relu_request(3, 1), relu_request(3, 2)});
  for (const MeasureResult& r : dead) EXPECT_EQ(r.status, "run") << r.error;
  // The agent left the queue: nothing measures now.
  EXPECT_THROW(client.measure({relu_request(0, 1)}), Error);
  const FarmStatus status = farm_status(address());
  ASSERT_EQ(status.agents.size(), 1u);
  const FarmAgentStatus& a = status.agents[0];
  EXPECT_EQ(a.name, "a1");
  EXPECT_FALSE(a.alive);
  EXPECT_EQ(a.device, "TuneTest CPU");
  EXPECT_EQ(a.done, 2);
  EXPECT_EQ(a.failed, 2);
  EXPECT_NE(a.quarantined.find("died or hung on 2 candidates in a row"), std::string::npos)
      << a.quarantined;
}

TEST_F(Farm, AnAgentWithTargetsJoinsThePoolOfItsDeviceAndStatusCountsItsWork) {
  // No key in the address: the device's name makes it ("TuneTest CPU" -> "tunetest-cpu").
  agents_["a1"] = spawn({kTessera, "agent", "--broker", url(), "--name", "a1", "--targets",
                         "tunetest", "--cache-dir", dir_ + "/cache-a1", "--lease", "0.6"},
                        dir_ + "/agent-a1.log");
  BrokerAddress pool = BrokerAddress::parse(url() + "/tunetest-cpu");
  wait_for_agents(1, pool);
  FarmClient client(pool);
  for (const MeasureResult& r : client.measure({relu_request(0, 1), relu_request(2, 1)})) {
    EXPECT_EQ(r.device, "TuneTest CPU");
  }
  // The command's JSON, against what this test sent: 2 answered, 1 failed (mode 2 never
  // compiles).
  done_in(pool, 2);
  const std::string json =
      command_output(std::string(kTessera) + " farm status --broker " + url() + " --json");
  EXPECT_NE(json.find("\"key\": \"tunetest-cpu\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\": \"a1\", \"device\": \"TuneTest CPU\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"alive\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"plugins\": \"tunetest "), std::string::npos) << json;
  EXPECT_NE(json.find("\"done\": 2, \"failed\": 1"), std::string::npos) << json;
}

// A job whose reply key holds a string cannot be answered: the agent moves it to the dead letters
// with the server's reason and acknowledges it, keeps serving, and restarted under its name does
// not read it again.
TEST_F(Farm, AJobWhoseReplyKeyHoldsAnotherTypeIsDeadLetteredAndNeverComesBack) {
  start_agent("a1", {"--targets", "tunetest"});
  wait_for_agents(1);
  const std::string reply = pool_key("reply:wrongtype");
  redis_cli(port_, "SET " + reply + " not-a-list");
  add_raw_job("7\t" + reply + "\t12-0123456789abcdef\t" + encode_request(relu_request(0, 1)));
  // Recorded, then acknowledged.
  EXPECT_TRUE(wait_until([&] {
    return redis_cli(port_, "XLEN " + pool_key("dead")) == "1\n" && held_by("a1").empty();
  }));
  FarmStatus status = farm_status(address());
  EXPECT_EQ(status.dead_letters, 1);
  ASSERT_EQ(status.dead.size(), 1u);
  EXPECT_EQ(status.dead[0].agent, "agent a1");
  EXPECT_EQ(status.dead[0].reason.rfind(
                "its reply key " + reply + " cannot take the answer: WRONGTYPE", 0),
            0u)
      << status.dead[0].reason;
  EXPECT_EQ(status.dead[0].job.rfind("7\t" + reply + "\t12-0123456789abcdef\tmodel=", 0), 0u);
  EXPECT_EQ(redis_cli(port_, "GET " + reply), "not-a-list\n");  // left as it was
  EXPECT_TRUE(held_by("a1").empty());                           // acknowledged
  EXPECT_EQ(redis_cli(port_, "XLEN " + pool_key("jobs")), "0\n");
  EXPECT_TRUE(agent_running("a1"));
  expect_serving_like_a_local_worker();
  // The same name again: nothing comes back, and it serves.
  end_process(agents_["a1"], SIGKILL);
  start_agent("a1", {"--targets", "tunetest"});
  wait_for_agents(1);
  expect_serving_like_a_local_worker();
  EXPECT_EQ(farm_status(address()).dead_letters, 1);
  EXPECT_TRUE(agent_running("a1"));
}

// Model keys holding a list, bytes of another length, or bytes of another hash than their name
// says: each job is refused with the reason (nothing reaches a worker or the cache), and the
// agent serves on.
TEST_F(Farm, AModelKeyHoldingAnotherTypeOrOtherBytesIsRefusedAndTheAgentServesOn) {
  start_agent("a1", {"--targets", "tunetest"});
  wait_for_agents(1);
  const std::string reply = pool_key("reply:t");
  redis_cli(port_, "RPUSH " + pool_key("model:12-0123456789abcdef") + " a list");
  redis_cli(port_, "SET " + pool_key("model:9-00000000000000aa") + " abc");
  redis_cli(port_, "SET " + pool_key("model:5-0123456789abcdef") + " abcde");
  const std::string request = encode_request(relu_request(0, 1));
  add_raw_job("1\t" + reply + "\t12-0123456789abcdef\t" + request);
  add_raw_job("2\t" + reply + "\t9-00000000000000aa\t" + request);
  add_raw_job("3\t" + reply + "\t5-0123456789abcdef\t" + request);
  const std::map<std::string, std::string> answers = answers_on(reply, 3);
  ASSERT_EQ(answers.size(), 3u);
  const std::map<std::string, std::string> why = {
      {"1", "farm agent a1: model key " + pool_key("model:12-0123456789abcdef") +
                " holds something else than a model: WRONGTYPE"},
      {"2", "farm agent a1: model key " + pool_key("model:9-00000000000000aa") +
                " holds 3 bytes, not the 9 its name says"},
      {"3", "farm agent a1: model key " + pool_key("model:5-0123456789abcdef") +
                " holds bytes whose hash is not the one its name says"}};
  for (const auto& [id, text] : why) {
    const std::optional<MeasureResult> r =
        decode_result(answers.at(id).substr(answers.at(id).find('\t') + 1));
    ASSERT_TRUE(r) << answers.at(id);
    EXPECT_EQ(r->status, "refused") << id;
    EXPECT_EQ(r->error.rfind(text, 0), 0u) << r->error;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/cache-a1/models"));
  EXPECT_EQ(farm_status(address()).dead_letters, 0);
  EXPECT_TRUE(agent_running("a1"));
  expect_serving_like_a_local_worker();
}

// A model key that is not <size>-<16 lowercase hex digits> (a '/', a path out of the cache,
// capitals) is refused before anything is fetched or written; the agent serves on.
TEST_F(Farm, AModelKeyWithASlashIsRefusedAndTheAgentServesOn) {
  start_agent("a1", {"--targets", "tunetest"});
  wait_for_agents(1);
  const std::string reply = pool_key("reply:t");
  const std::vector<std::string> keys = {"12-0123456789ab/def", "1-../../../../../x",
                                         "16-0123456789ABCDEF"};
  for (size_t i = 0; i < keys.size(); ++i) {
    redis_cli(port_, "SET " + pool_key("model:" + keys[i]) + " 0123456789abcdef");
    add_raw_job(std::to_string(i) + "\t" + reply + "\t" + keys[i] + "\t" +
                encode_request(relu_request(0, 1)));
  }
  const std::map<std::string, std::string> answers = answers_on(reply, keys.size());
  ASSERT_EQ(answers.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string& a = answers.at(std::to_string(i));
    const std::optional<MeasureResult> r = decode_result(a.substr(a.find('\t') + 1));
    ASSERT_TRUE(r) << a;
    EXPECT_EQ(r->status, "refused");
    EXPECT_EQ(r->error,
              "farm agent a1 refused model key '" + keys[i] + "' is not <size>-<16 hex digits>");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/cache-a1/models"));
  EXPECT_TRUE(agent_running("a1"));
  expect_serving_like_a_local_worker();
}

// A job held by an agent that stopped (killed here while measuring it) goes back on the queue
// once; the second time it goes to the dead letters and the tuner gets "crash". `tessera farm
// status` shows the dead letter, and the agent, restarted, serves good jobs.
TEST_F(Farm, AJobThatStopsAnAgentTwiceGoesToTheDeadLettersAndStatusShowsIt) {
  setenv("TESSERA_TUNETEST_SLEEP_MS", "100", 1);  // mode 1 block 2: 2 runs of 400 ms
  start_agent("a1", {"--targets", "tunetest"});
  wait_for_agents(1);
  const MeasureRequest deadly = relu_request(1, 2);
  FarmClient client(address());
  std::vector<MeasureResult> results;
  std::thread tuner([&] { results = client.measure({deadly}); });
  std::string held;
  for (int stop = 0; stop < kMaxFarmLosses; ++stop) {
    held = wait_until_holding("a1", held);  // each time the job comes back as a new entry
    EXPECT_FALSE(held.empty()) << "a1 did not take the job, time " << stop + 1;
    end_process(agents_["a1"], SIGKILL);
    start_agent("a1", {"--targets", "tunetest"});
  }
  tuner.join();
  ASSERT_EQ(results.size(), 1u);
  const std::string reason = "it stopped agents 2 times while they held it (last: a1)";
  EXPECT_EQ(results[0].status, "crash");
  EXPECT_EQ(results[0].error, "farm: " + reason + "; moved to the pool's dead letters");
  const FarmStatus status = farm_status(address());
  EXPECT_EQ(status.dead_letters, 1);
  ASSERT_EQ(status.dead.size(), 1u);
  EXPECT_EQ(status.dead[0].reason, reason);
  EXPECT_NE(status.dead[0].job.find("\t" + encode_request(deadly)), std::string::npos)
      << status.dead[0].job;
  const std::string text =
      command_output(std::string(kTessera) + " farm status --broker " + broker() + " 2>&1");
  EXPECT_NE(text.find("0 job(s) waiting, 1 agent(s), 1 dead letter(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("): " + reason + "\n    job: "), std::string::npos) << text;
  const std::string json =
      command_output(std::string(kTessera) + " farm status --broker " + broker() + " --json");
  EXPECT_NE(json.find("\"dead_letters\": 1, \"dead\": [{\"id\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"reason\": \"" + reason + "\""), std::string::npos) << json;
  wait_for_agents(1);
  expect_serving_like_a_local_worker();
  EXPECT_EQ(farm_status(address()).dead_letters, 1);  // it did not come back
}

// Names and device strings from the server, and job fields in the agent's log, are printed with
// control characters escaped (ESC, newline), so nothing on the server can drive a terminal.
TEST_F(Farm, StatusAndAgentLogsEscapeControlCharacters) {
  start_agent("a1", {"--targets", "tunetest"});
  wait_for_agents(1);
  const std::string evil = "printf 'evil\\033[2J\\nname'";
  command_output(find_program("redis-cli") + " -p " + std::to_string(port_) + " SADD " +
                 pool_key("agents") + " \"$(" + evil + ")\"");
  command_output(find_program("redis-cli") + " -p " + std::to_string(port_) + " HSET \"$(printf '" +
                 pool_key("agent:") +
                 "evil\\033[2J\\nname')\" device \"$(printf 'Dev\\033[31m\\nice')\"");
  MeasureRequest odd = relu_request(0, 1);
  odd.node = "relu1\x1b[2J";
  const std::vector<MeasureResult> r = FarmClient(address()).measure({odd});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].status, "ok");  // no such node
  const std::string text =
      command_output(std::string(kTessera) + " farm status --broker " + broker() + " 2>&1");
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("evil\\x1b[2J\\x0aname"), std::string::npos) << text;
  EXPECT_NE(text.find("Dev\\x1b[31m\\x0aice"), std::string::npos) << text;
  const std::string json =
      command_output(std::string(kTessera) + " farm status --broker " + broker() + " --json");
  EXPECT_EQ(json.find('\x1b'), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\": \"evil\\u001b[2J\\nname\""), std::string::npos) << json;
  end_process(agents_["a1"], SIGTERM);
  agents_.erase("a1");
  const std::string log = read_text(dir_ + "/agent-a1.log");
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
  EXPECT_NE(log.find("relu1\\x1b[2J relu.test: " + r[0].status), std::string::npos) << log;
}

// Without --key the tuner sends to the pool of the device it tunes for, where agents with
// --targets meet ("TuneTest CPU" -> tunetest-cpu).
TEST_F(Farm, WithoutAKeyTheTunerUsesThePoolOfItsDevice) {
  agents_["a1"] = spawn({kTessera, "agent", "--broker", url(), "--name", "a1", "--targets",
                         "tunetest", "--cache-dir", dir_ + "/cache-a1", "--lease", "0.6"},
                        dir_ + "/agent-a1.log");
  const BrokerAddress pool = BrokerAddress::parse(url() + "/tunetest-cpu");
  wait_for_agents(1, pool);
  TuneOptions o;
  o.model = relu_model();
  o.targets = {"tunetest", "reference"};
  o.trials = 3;
  o.tuner = "grid";
  o.repeats = 1;
  o.worker_command = worker_command(kTessera);
  o.farm = url();
  o.farm_agent_wait_s = 30;
  std::vector<std::string> said;
  o.progress = [&](const std::string& line) { said.push_back(line); };
  const TuneReport report = run_tuning(o);
  ASSERT_EQ(report.records.size(), 3u);
  for (const LogRecord& r : report.records) EXPECT_EQ(r.device, "TuneTest CPU");
  const std::string chose =
      "farm " + url() + "/tunetest-cpu: no key given; the pool of the device it tunes for";
  EXPECT_NE(std::find(said.begin(), said.end(), chose), said.end()) << said.size() << " lines";
  EXPECT_EQ(done_in(pool, 3), 3);
  EXPECT_EQ(farm_status(pool).agents.size(), 1u);
}

// Without --key and no agent in its device's pool: the one live pool whose agents measure the
// plugin is used; with two such pools the run ends at once (nothing queued) naming them.
TEST_F(Farm, WithoutAKeyTheOneLivePoolThatMeasuresThePluginIsUsedAndTwoAreRefused) {
  for (const std::string pool : {"pool-a", "pool-b"}) {
    const std::string name = pool == "pool-a" ? "pa" : "pb";
    agents_[name] =
        spawn({kTessera, "agent", "--broker", url() + "/" + pool, "--name", name, "--targets",
               "tunetest", "--cache-dir", dir_ + "/cache-" + name, "--lease", "0.6"},
              dir_ + "/agent-" + name + ".log");
    wait_for_agents(1, BrokerAddress::parse(url() + "/" + pool));
  }
  TuneOptions o;
  o.model = relu_model();
  o.targets = {"tunetest", "reference"};
  o.trials = 2;
  o.tuner = "grid";
  o.repeats = 1;
  o.worker_command = worker_command(kTessera);
  o.farm = url();
  o.farm_agent_wait_s = 30;
  try {
    run_tuning(o);
    ADD_FAILURE() << "tuned with two pools to choose from";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no key given; the pool of the device it tunes for ('tunetest-cpu') has "
                        "no live agent and 2 live pool(s) measure tunetest; name the pool with "
                        "--key"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("\n  pool-a: pa on 'TuneTest CPU' measuring tunetest"), std::string::npos)
        << what;
    EXPECT_NE(what.find("\n  pool-b: pb on 'TuneTest CPU' measuring tunetest"), std::string::npos)
        << what;
  }
  for (const char* pool : {"pool-a", "pool-b"}) {
    EXPECT_EQ(redis_cli(port_, std::string("XLEN tessera:farm:") + pool + ":jobs"), "0\n");
  }
  end_process(agents_["pb"], SIGKILL);
  agents_.erase("pb");
  wait_for_agents(0, BrokerAddress::parse(url() + "/pool-b"));
  std::vector<std::string> said;
  o.progress = [&](const std::string& line) { said.push_back(line); };
  const TuneReport report = run_tuning(o);
  ASSERT_EQ(report.records.size(), 2u);
  const std::string chose =
      "farm " + url() + "/pool-a: no key given; the one pool whose live agents measure tunetest";
  EXPECT_NE(std::find(said.begin(), said.end(), chose), said.end()) << said.size() << " lines";
  EXPECT_EQ(done_in(BrokerAddress::parse(url() + "/pool-a"), 2), 2);
}

// hiredis 0.14 has no TLS, so a farm across an untrusted network goes through a TLS tunnel: here
// a redis-server that only speaks TLS (with a password) and stunnel in client mode, which checks
// the server's certificate, in front of it. Agents and the tuner measure through the tunnel as
// a local worker does; the TLS port itself refuses them; no output names the password.
TEST_F(Farm, ThroughATlsTunnelAgentsMeasureAsLocallyAndThePasswordIsNeverShown) {
  const std::string stunnel = find_program("stunnel4"), openssl = find_program("openssl");
  if (stunnel.empty() || openssl.empty()) {
    TESSERA_SKIP_WITHOUT("stunnel4 and openssl") << "apt-get install stunnel4 openssl";
  }
  const std::string cert = dir_ + "/cert.pem", key = dir_ + "/key.pem";
  command_output(openssl + " req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1" +
                 " -addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert + " 2>&1");
  ASSERT_TRUE(std::filesystem::exists(cert)) << "openssl made no certificate";
  const int tls_port = free_port(), tunnel_port = free_port();
  const pid_t tls_server = spawn({server_,
                                  "--bind",
                                  "127.0.0.1",
                                  "--port",
                                  "0",
                                  "--tls-port",
                                  std::to_string(tls_port),
                                  "--tls-cert-file",
                                  cert,
                                  "--tls-key-file",
                                  key,
                                  "--tls-ca-cert-file",
                                  cert,
                                  "--tls-auth-clients",
                                  "no",
                                  "--requirepass",
                                  "tls-s3cret",
                                  "--save",
                                  "",
                                  "--appendonly",
                                  "no"},
                                 dir_ + "/redis-tls.log");
  const std::string conf = dir_ + "/stunnel.conf";
  {
    FILE* f = std::fopen(conf.c_str(), "w");
    ASSERT_TRUE(f);
    std::fprintf(f,
                 "foreground = yes\npid =\n[farm]\nclient = yes\naccept = 127.0.0.1:%d\n"
                 "connect = 127.0.0.1:%d\nCAfile = %s\nverifyChain = yes\ncheckIP = "
                 "127.0.0.1\n",
                 tunnel_port, tls_port, cert.c_str());
    std::fclose(f);
  }
  const pid_t tunnel = spawn({stunnel, conf}, dir_ + "/stunnel.log");
  struct Cleanup {
    pid_t a, b;
    ~Cleanup() {
      end_process(a, SIGTERM);
      end_process(b, SIGTERM);
    }
  } cleanup{tunnel, tls_server};
  const std::string through =
      "redis://:tls-s3cret@127.0.0.1:" + std::to_string(tunnel_port) + "/tls";
  // Up once PING answers through the tunnel (TLS handshake, certificate check, AUTH).
  const std::string ping = find_program("redis-cli") + " -p " + std::to_string(tunnel_port) +
                           " --no-auth-warning -a tls-s3cret PING 2>&1";
  wait_until([&] { return command_output(ping) == "PONG\n"; });
  ASSERT_EQ(command_output(ping), "PONG\n") << "no TLS redis-server behind the tunnel";

  // Before any agent: the server has no pool (the address names none, so all are listed).
  const std::string no_pool = command_output(
      std::string(kTessera) + " farm status --broker redis://:tls-s3cret@127.0.0.1:" +
      std::to_string(tunnel_port) + " 2>&1");
  EXPECT_NE(no_pool.find("no pool on redis://127.0.0.1:" + std::to_string(tunnel_port)),
            std::string::npos)
      << no_pool;
  agents_["t1"] = spawn({kTessera, "agent", "--broker", through, "--name", "t1", "--cache-dir",
                         dir_ + "/cache-t1", "--lease", "0.6"},
                        dir_ + "/agent-t1.log");
  wait_for_agents(1, BrokerAddress::parse(through));
  std::vector<MeasureRequest> requests = {relu_request(0, 1), relu_request(1, 2),
                                          relu_request(2, 1)};
  const std::vector<MeasureResult> farm =
      FarmClient(BrokerAddress::parse(through)).measure(requests);
  ASSERT_EQ(farm.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const MeasureResult local = measure(worker_command(kTessera), requests[i]);
    EXPECT_EQ(farm[i].status, local.status) << i;
    EXPECT_EQ(farm[i].max_error, local.max_error) << i;
  }
  done_in(BrokerAddress::parse(through), 3);
  const std::string status =
      command_output(std::string(kTessera) + " farm status --broker " + through + " 2>&1");
  EXPECT_NE(status.find("t1"), std::string::npos) << status;
  EXPECT_NE(status.find("3 done, 1 failed"), std::string::npos) << status;  // mode 2 fails
  // Plain Redis protocol on the TLS port: the server drops it, and the error says where.
  const std::string plain = command_output(
      std::string(kTessera) +
      " farm status --broker redis://:tls-s3cret@127.0.0.1:" + std::to_string(tls_port) + " 2>&1");
  EXPECT_NE(plain.find("error: farm broker redis://127.0.0.1:" + std::to_string(tls_port)),
            std::string::npos)
      << plain;
  for (const std::string& out : {no_pool, status, plain}) {
    EXPECT_EQ(out.find("tls-s3cret"), std::string::npos) << out;
  }
  end_process(agents_["t1"], SIGTERM);
  agents_.erase("t1");
  std::ifstream agent_log(dir_ + "/agent-t1.log");
  const std::string agent_out((std::istreambuf_iterator<char>(agent_log)),
                              std::istreambuf_iterator<char>());
  EXPECT_EQ(agent_out.find("tls-s3cret"), std::string::npos) << agent_out;
}

}  // namespace
}  // namespace tessera::tune
