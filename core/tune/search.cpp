// Search spaces and searchers of the tuner: random, grid, genetic ("ga") and a gradient-boosted
// trees cost model ("xgb"). libxgboost is loaded with dlopen on first use so that only the tuner
// depends on it (libtessera itself does not link it).
#include <dlfcn.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "tessera/error.hpp"
#include "tessera/tuner.hpp"

namespace tessera::tune {

SearchSpace::SearchSpace(std::vector<ScheduleSpace> schedules) : schedules_(std::move(schedules)) {
  for (const ScheduleSpace& s : schedules_) {
    uint64_t n = 1;
    for (const KnobSpace& k : s.knobs) n *= std::max<uint64_t>(1, k.values.size());
    sizes_.push_back(n);
    total_ += n;
    max_knobs_ = std::max(max_knobs_, s.knobs.size());
  }
}

Point SearchSpace::at(uint64_t flat) const {
  Point p;
  for (size_t s = 0; s < schedules_.size(); ++s) {
    if (flat < sizes_[s]) {
      p.schedule = static_cast<int>(s);
      const auto& knobs = schedules_[s].knobs;
      p.index.assign(knobs.size(), 0);
      for (size_t k = knobs.size(); k-- > 0;) {
        const uint64_t n = std::max<uint64_t>(1, knobs[k].values.size());
        p.index[k] = static_cast<int>(flat % n);
        flat /= n;
      }
      return p;
    }
    flat -= sizes_[s];
  }
  throw Error("tuner: point index beyond the search space");
}

bool SearchSpace::valid(const Point& p) const {
  if (p.schedule < 0 || p.schedule >= static_cast<int>(schedules_.size())) return false;
  const auto& knobs = schedules_[static_cast<size_t>(p.schedule)].knobs;
  if (p.index.size() != knobs.size()) return false;
  for (size_t k = 0; k < knobs.size(); ++k) {
    if (p.index[k] < 0 || p.index[k] >= static_cast<int>(knobs[k].values.size())) return false;
  }
  return true;
}

Point SearchSpace::random(std::mt19937_64& rng) const {
  return at(std::uniform_int_distribution<uint64_t>(0, total_ - 1)(rng));
}

std::optional<Point> SearchSpace::find(
    const std::string& schedule, const std::vector<std::pair<std::string, int64_t>>& knobs) const {
  for (size_t s = 0; s < schedules_.size(); ++s) {
    if (schedules_[s].name != schedule || schedules_[s].knobs.size() != knobs.size()) continue;
    Point p;
    p.schedule = static_cast<int>(s);
    for (const KnobSpace& k : schedules_[s].knobs) {
      auto it = std::find_if(knobs.begin(), knobs.end(),
                             [&](const auto& kv) { return kv.first == k.name; });
      if (it == knobs.end()) return std::nullopt;
      auto v = std::find(k.values.begin(), k.values.end(), it->second);
      if (v == k.values.end()) return std::nullopt;
      p.index.push_back(static_cast<int>(v - k.values.begin()));
    }
    return p;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, int64_t>> SearchSpace::knobs(const Point& p) const {
  std::vector<std::pair<std::string, int64_t>> out;
  const auto& knobs = schedules_.at(static_cast<size_t>(p.schedule)).knobs;
  for (size_t k = 0; k < knobs.size(); ++k) {
    out.emplace_back(knobs[k].name, knobs[k].values.at(static_cast<size_t>(p.index[k])));
  }
  return out;
}

std::string SearchSpace::describe(const Point& p) const {
  std::string s = schedules_.at(static_cast<size_t>(p.schedule)).name + "{";
  bool first = true;
  for (const auto& [name, value] : knobs(p)) {
    s += (first ? "" : ",") + name + "=" + std::to_string(value);
    first = false;
  }
  return s + "}";
}

std::vector<float> SearchSpace::features(const Point& p) const {
  std::vector<float> f(1 + max_knobs_, -1.0f);
  f[0] = static_cast<float>(p.schedule);
  const auto kv = knobs(p);
  for (size_t k = 0; k < kv.size(); ++k) f[1 + k] = static_cast<float>(kv[k].second);
  return f;
}

void Searcher::update(const Point& p, double cost) {
  visited_.insert(p);
  history_.emplace_back(p, cost);
}

std::optional<Point> Searcher::random_unvisited() {
  if (exhausted()) return std::nullopt;
  // Rejection sampling while the space is mostly unvisited; a scan once it is dense.
  for (int tries = 0; tries < 64; ++tries) {
    Point p = space_.random(rng_);
    if (!visited_.count(p)) return p;
  }
  const uint64_t start = std::uniform_int_distribution<uint64_t>(0, space_.size() - 1)(rng_);
  for (uint64_t i = 0; i < space_.size(); ++i) {
    Point p = space_.at((start + i) % space_.size());
    if (!visited_.count(p)) return p;
  }
  return std::nullopt;
}

namespace {

class RandomSearcher : public Searcher {
 public:
  RandomSearcher(const SearchSpace& space, uint64_t seed) : Searcher(space, seed) {}
  std::vector<Point> propose(int n) override {
    std::vector<Point> out;
    std::set<Point> taken;
    while (static_cast<int>(out.size()) < n) {
      auto p = random_unvisited();
      if (!p) break;
      visited_.insert(*p);  // reserve; update() records the cost
      out.push_back(*p);
    }
    return out;
  }
};

class GridSearcher : public Searcher {
 public:
  GridSearcher(const SearchSpace& space, uint64_t seed) : Searcher(space, seed) {}
  std::vector<Point> propose(int n) override {
    std::vector<Point> out;
    while (static_cast<int>(out.size()) < n && next_ < space_.size()) {
      Point p = space_.at(next_++);
      if (visited_.count(p)) continue;
      visited_.insert(p);
      out.push_back(p);
    }
    return out;
  }

 private:
  uint64_t next_ = 0;
};

// Genetic search: tournament selection among the measured points, uniform crossover within a
// schedule, per-knob mutation to a neighbouring value (or, rarely, a random one).
class GeneticSearcher : public Searcher {
 public:
  GeneticSearcher(const SearchSpace& space, uint64_t seed) : Searcher(space, seed) {}
  std::vector<Point> propose(int n) override {
    std::vector<Point> out;
    std::vector<std::pair<Point, double>> pool;
    for (const auto& h : history_) {
      if (std::isfinite(h.second)) pool.push_back(h);
    }
    std::sort(pool.begin(), pool.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    if (pool.size() > 16) pool.resize(16);
    while (static_cast<int>(out.size()) < n) {
      std::optional<Point> child;
      if (pool.size() >= 2) {
        for (int tries = 0; tries < 32 && !child; ++tries) {
          Point c = breed(pool);
          if (space_.valid(c) && !visited_.count(c)) child = c;
        }
      }
      if (!child) child = random_unvisited();
      if (!child) break;
      visited_.insert(*child);
      out.push_back(*child);
    }
    return out;
  }

 private:
  const Point& tournament(const std::vector<std::pair<Point, double>>& pool) {
    std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
    const size_t a = pick(rng_), b = pick(rng_);
    return pool[std::min(a, b)].first;  // pool is sorted: the lower index is the fitter
  }
  Point breed(const std::vector<std::pair<Point, double>>& pool) {
    const Point& a = tournament(pool);
    const Point& b = tournament(pool);
    Point c = a;
    if (b.schedule == a.schedule) {
      for (size_t k = 0; k < c.index.size(); ++k) {
        if (rng_() & 1) c.index[k] = b.index[k];
      }
    }
    const auto& knobs = space_.schedules()[static_cast<size_t>(c.schedule)].knobs;
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t k = 0; k < c.index.size(); ++k) {
      const int n = static_cast<int>(knobs[k].values.size());
      if (u(rng_) < 0.3) {
        const int step = (rng_() & 1) ? 1 : -1;
        c.index[k] = std::clamp(c.index[k] + step, 0, n - 1);
      } else if (u(rng_) < 0.05) {
        c.index[k] = std::uniform_int_distribution<int>(0, n - 1)(rng_);
      }
    }
    return c;
  }
};

// ---- xgboost through dlopen ----

struct XgbApi {
  void* lib = nullptr;
  std::string error;
  decltype(&XGDMatrixCreateFromMat) create_mat = nullptr;
  decltype(&XGDMatrixSetFloatInfo) set_float_info = nullptr;
  decltype(&XGDMatrixFree) free_mat = nullptr;
  decltype(&XGBoosterCreate) create = nullptr;
  decltype(&XGBoosterSetParam) set_param = nullptr;
  decltype(&XGBoosterUpdateOneIter) update = nullptr;
  decltype(&XGBoosterPredict) predict = nullptr;
  decltype(&XGBoosterFree) free_booster = nullptr;
  decltype(&XGBGetLastError) last_error = nullptr;
};

const XgbApi& xgb() {
  static XgbApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name : {"libxgboost.so.0", "libxgboost.so"}) {
      api.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (api.lib) break;
    }
    if (!api.lib) {
      const char* e = dlerror();
      api.error = std::string("cannot load libxgboost (apt-get install libxgboost0): ") +
                  (e ? e : "not found");
      return;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api.lib, name));
      if (!fn && api.error.empty()) api.error = std::string("libxgboost lacks ") + name;
    };
    sym(api.create_mat, "XGDMatrixCreateFromMat");
    sym(api.set_float_info, "XGDMatrixSetFloatInfo");
    sym(api.free_mat, "XGDMatrixFree");
    sym(api.create, "XGBoosterCreate");
    sym(api.set_param, "XGBoosterSetParam");
    sym(api.update, "XGBoosterUpdateOneIter");
    sym(api.predict, "XGBoosterPredict");
    sym(api.free_booster, "XGBoosterFree");
    sym(api.last_error, "XGBGetLastError");
  });
  return api;
}

void xgb_check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("tuner: xgboost ") + what + ": " + xgb().last_error());
}

// Ranks candidates with boosted trees fitted to log(cost) of every measured point of this task
// and of earlier tasks of the same op (shared data, workload features appended). Until enough
// points exist, and for a tenth of each batch, it explores at random.
class XgbSearcher : public Searcher {
 public:
  XgbSearcher(const SearchSpace& space, uint64_t seed, std::vector<float> workload,
              std::shared_ptr<CostModelData> shared)
      : Searcher(space, seed), workload_(std::move(workload)), data_(std::move(shared)) {
    if (!data_) data_ = std::make_shared<CostModelData>();
  }

  void update(const Point& p, double cost) override {
    Searcher::update(p, cost);
    data_->x.push_back(row(p));
    // Failures get a cost well above anything measured so the model learns to avoid them.
    data_->y.push_back(std::isfinite(cost) ? static_cast<float>(std::log(std::max(cost, 1e-9)))
                                           : 30.0f);
  }

  std::vector<Point> propose(int n) override {
    std::vector<Point> out;
    if (data_->y.size() < 8) {
      while (static_cast<int>(out.size()) < n) {
        auto p = random_unvisited();
        if (!p) break;
        visited_.insert(*p);
        out.push_back(*p);
      }
      return out;
    }
    // Candidates: the whole space when small, else random unvisited samples plus neighbours of
    // the best points.
    std::vector<Point> candidates;
    std::set<Point> seen;
    auto add = [&](const Point& p) {
      if (space_.valid(p) && !visited_.count(p) && seen.insert(p).second) candidates.push_back(p);
    };
    if (space_.size() <= 2048) {
      for (uint64_t i = 0; i < space_.size(); ++i) add(space_.at(i));
    } else {
      for (int i = 0; i < 1024; ++i) add(space_.random(rng_));
      std::vector<std::pair<Point, double>> best = history_;
      std::sort(best.begin(), best.end(),
                [](const auto& a, const auto& b) { return a.second < b.second; });
      for (size_t b = 0; b < std::min<size_t>(best.size(), 8); ++b) {
        for (size_t k = 0; k < best[b].first.index.size(); ++k) {
          for (int step : {-2, -1, 1, 2}) {
            Point q = best[b].first;
            q.index[k] += step;
            add(q);
          }
        }
      }
    }
    if (candidates.empty()) return out;
    const std::vector<float> scores = predict(candidates);
    std::vector<size_t> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] < scores[b]; });
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t i : order) {
      if (static_cast<int>(out.size()) >= n) break;
      if (u(rng_) < 0.1) {
        if (auto r = random_unvisited()) {
          visited_.insert(*r);
          out.push_back(*r);
          continue;
        }
      }
      if (visited_.count(candidates[i])) continue;
      visited_.insert(candidates[i]);
      out.push_back(candidates[i]);
    }
    return out;
  }

 private:
  std::vector<float> row(const Point& p) const {
    std::vector<float> f = space_.features(p);
    f.insert(f.end(), workload_.begin(), workload_.end());
    return f;
  }

  std::vector<float> predict(const std::vector<Point>& candidates) {
    const XgbApi& api = xgb();
    size_t cols = 0;
    for (const auto& r : data_->x) cols = std::max(cols, r.size());
    for (const Point& p : candidates) cols = std::max(cols, row(p).size());
    auto matrix = [&](const std::vector<std::vector<float>>& rows) {
      std::vector<float> flat(rows.size() * cols, -1.0f);
      for (size_t i = 0; i < rows.size(); ++i) {
        std::copy(rows[i].begin(), rows[i].end(), flat.begin() + static_cast<long>(i * cols));
      }
      DMatrixHandle h = nullptr;
      xgb_check(api.create_mat(flat.data(), rows.size(), cols,
                               std::numeric_limits<float>::quiet_NaN(), &h),
                "DMatrix");
      return h;
    };
    DMatrixHandle train = matrix(data_->x);
    xgb_check(api.set_float_info(train, "label", data_->y.data(), data_->y.size()), "labels");
    BoosterHandle booster = nullptr;
    xgb_check(api.create(&train, 1, &booster), "booster");
    for (const auto& [k, v] :
         std::vector<std::pair<const char*, const char*>>{{"max_depth", "5"},
                                                          {"eta", "0.3"},
                                                          {"nthread", "1"},
                                                          {"verbosity", "0"},
                                                          {"seed", "0"},
                                                          {"objective", "reg:squarederror"}}) {
      xgb_check(api.set_param(booster, k, v), "parameter");
    }
    for (int it = 0; it < 40; ++it) xgb_check(api.update(booster, it, train), "training");
    std::vector<std::vector<float>> rows;
    for (const Point& p : candidates) rows.push_back(row(p));
    DMatrixHandle test = matrix(rows);
    bst_ulong len = 0;
    const float* out = nullptr;
    xgb_check(api.predict(booster, test, 0, 0, 0, &len, &out), "predict");
    std::vector<float> scores(out, out + len);
    api.free_mat(test);
    api.free_mat(train);
    api.free_booster(booster);
    scores.resize(candidates.size(), 0.0f);
    return scores;
  }

  std::vector<float> workload_;
  std::shared_ptr<CostModelData> data_;
};

}  // namespace

bool xgboost_available(std::string* why) {
  const XgbApi& api = xgb();
  if (why) *why = api.error;
  return api.lib && api.error.empty();
}

std::unique_ptr<Searcher> make_searcher(const std::string& kind, const SearchSpace& space,
                                        uint64_t seed, std::vector<float> workload_features,
                                        std::shared_ptr<CostModelData> shared) {
  if (space.size() == 0) throw Error("tuner: empty search space");
  if (kind == "random") return std::make_unique<RandomSearcher>(space, seed);
  if (kind == "grid") return std::make_unique<GridSearcher>(space, seed);
  if (kind == "ga") return std::make_unique<GeneticSearcher>(space, seed);
  if (kind == "xgb") {
    std::string why;
    if (!xgboost_available(&why)) throw Error("tuner: --tuner xgb: " + why);
    return std::make_unique<XgbSearcher>(space, seed, std::move(workload_features),
                                         std::move(shared));
  }
  throw Error("tuner: unknown tuner '" + kind + "' (xgb, ga, random, grid)");
}

}  // namespace tessera::tune
