// best_of: PyDTNN's BestOf. Wraps candidate algorithms and, for the layer shape it serves, times
// them in rounds during the first training steps (forward and backward together: one step of one
// candidate), drops the ones more than prune_factor slower than the best after prune_after rounds,
// and after `rounds` rounds keeps the one with the lowest median step time.
//   - Under MPI the choice is collective: the ranks average their medians and all take the same.
//   - The choice is saved in a tuning cache (JSON) keyed by CPU, BLIS kernel set, threads,
//   candidate
//     set (each with a digest of its plugin file, so that a rebuilt algorithm is tuned again) and
//     shape, and a later run with the same key starts with it (tuning nothing).
//   - report() gives the table of medians and the choice, printed at the end of the run.
// Only training steps count: a forward that no backward follows (evaluation) is not timed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/digest.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/trace.hpp"
#include "tuning_cache.hpp"

namespace {

using namespace dtnn;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  if (v.empty()) return INFINITY;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Where the tuning cache lives unless the cache_file parameter says otherwise.
std::filesystem::path default_cache_file() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "dtnn" / "best_of.json";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "dtnn" / "best_of.json";
  return {};
}

// The cache in file, with a warning when the file is something else (then it is left alone).
best_of::TuningCache read_cache(const std::string& file) {
  best_of::TuningCache cache = best_of::TuningCache::read(file);
  if (!cache.usable())
    log_warning("best_of: " + cache.problem() +
                "; this is not a dtnn tuning cache, so it is left alone: no cached choices are "
                "read or saved");
  return cache;
}

struct Candidate {
  std::string name;
  std::string build;  // a digest of the plugin's shared object: a rebuilt algorithm is tuned again
  std::shared_ptr<ConvAlgorithm> algorithm;
  std::vector<double> steps;  // seconds per training step
  bool pruned = false;
  double median_ms = 0;  // as decided (averaged over the ranks)
};

class BestOf final : public ConvAlgorithm {
 public:
  BestOf(const Params& p, const PluginContext& ctx)
      : rounds_(p.get_int("rounds")),
        prune_after_(p.get_int("prune_after")),
        prune_factor_(p.get_double("prune_factor")),
        cache_(p.get_string("cache_file")) {
    if (rounds_ < 1) p.fail("rounds", "a positive number of rounds");
    if (prune_after_ < 1) p.fail("prune_after", "a positive number of rounds");
    if (prune_factor_ <= 1) p.fail("prune_factor", "a factor greater than 1");
    if (!ctx.registry) throw Error("conv 'best_of' needs the plugin registry");
    std::vector<std::string> names = p.get_strings("candidates");
    if (names.empty())
      for (const std::string& n : ctx.registry->available("conv"))
        if (n != "best_of" && n != "reference") names.push_back(n);
    for (const std::string& n : names) {
      if (n == "best_of") p.fail("candidates", "conv algorithms other than best_of itself");
      Candidate c;
      c.name = n;
      c.algorithm = ctx.registry->create_as<ConvAlgorithm>("conv", n, Params());
      if (const PluginRecord* r = ctx.registry->find("conv", n);
          r && !r->file.empty() && std::filesystem::is_regular_file(r->file))
        c.build = file_digest(r->file);
      candidates_.push_back(std::move(c));
    }
    if (candidates_.empty()) p.fail("candidates", "at least one conv algorithm");
    if (cache_ == "default") cache_ = default_cache_file().string();
  }

  std::string name() const override {
    return chosen_ ? "best_of(" + chosen_->name + ")" : "best_of";
  }

  bool supports(const ConvGeometry& g, ConvPass pass, std::string& why_not) const override {
    std::string reasons;
    for (const Candidate& c : candidates_) {
      std::string why;
      if (c.algorithm->supports(g, pass, why)) return true;
      reasons += (reasons.empty() ? "" : "; ") + c.name + ": " + why;
    }
    why_not = "no candidate does (" + reasons + ")";
    return false;
  }

  void set_communicator(Communicator* communicator) override { comm_ = communicator; }

  void prepare(const ConvGeometry& g) override {
    g_ = g;
    // Candidates that compute every pass of g; the rest leave.
    std::erase_if(candidates_, [&](const Candidate& c) {
      std::string why;
      for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
        if (!c.algorithm->supports(g, pass, why)) return true;
      return false;
    });
    if (candidates_.empty()) throw Error("conv 'best_of': no candidate supports " + g.str());
    key_ = cache_key();
    if (const int cached = agreed_cached_choice(); cached >= 0) {
      choose(static_cast<std::size_t>(cached), "from the tuning cache " + cache_);
    } else if (candidates_.size() == 1) {
      choose(0, "the only candidate");
    }
    for (Candidate& c : candidates_) {  // they run one at a time: one workspace serves them all
      c.algorithm->set_workspace(&workspace());
      c.algorithm->prepare(g);
    }
  }

  // The largest remaining candidate's need (after the choice, the chosen one's).
  std::size_t workspace_bytes() const override {
    std::size_t most = 0;
    for (const Candidate& c : candidates_) most = std::max(most, c.algorithm->workspace_bytes());
    return most;
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    if (!chosen_) next_step();
    timed([&] { current().forward(x, w, y); }, false);
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    timed([&] { current().backward_data(dy, w, dx); }, true);
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    timed([&] { current().backward_filter(x, dy, dw); }, true);
  }

  std::string report() const override {
    if (!chosen_) return "";
    std::string out = "best_of " + g_.str() + ": '" + chosen_->name + "' " + how_;
    for (const Candidate& c : all_) {
      if (c.steps.empty()) continue;
      if (&c == &all_.front() || all_.front().steps.empty()) out += ";";
      char cell[96];
      std::snprintf(cell, sizeof cell, " %s %.3f ms%s", c.name.c_str(), c.median_ms,
                    c.name == chosen_->name ? " (chosen)"
                    : c.pruned              ? " (pruned)"
                                            : "");
      out += cell;
    }
    return out + "\n";
  }

 private:
  ConvAlgorithm& current() { return *(chosen_ ? chosen_ : &candidates_[turn_])->algorithm; }

  // Runs f, adding its time to the step in progress when tuning.
  template <class F>
  void timed(F&& f, bool backward) {
    if (chosen_) return f();
    const auto start = Clock::now();
    const std::int64_t start_ns = trace::recording() ? trace::now_ns() : -1;
    f();
    step_seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
    if (start_ns >= 0)  // a tuning round's call, named by the candidate timed
      trace::record(trace::Phase::tuning,
                    trace::intern({"best_of: " + candidates_[turn_].name,
                                   nlohmann::json{{"geometry", g_.str()}}.dump()}),
                    start_ns, trace::now_ns());
    step_had_backward_ = step_had_backward_ || backward;
  }

  // Called by forward while tuning: closes the step in progress and picks the next candidate.
  void next_step() {
    if (step_started_ && step_had_backward_) {
      candidates_[turn_].steps.push_back(step_seconds_);
      const std::size_t previous = turn_;
      turn_ = next_active(turn_ + 1);
      if (turn_ <= previous) end_of_round();
    }
    if (chosen_) return;
    step_started_ = true;
    step_seconds_ = 0;
    step_had_backward_ = false;
  }

  std::size_t next_active(std::size_t from) const {
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      const std::size_t j = (from + i) % candidates_.size();
      if (!candidates_[j].pruned) return j;
    }
    return 0;
  }

  void end_of_round() {
    ++tuned_rounds_;
    if (tuned_rounds_ == prune_after_) {
      double best = INFINITY;
      for (const Candidate& c : candidates_) best = std::min(best, median(c.steps));
      for (Candidate& c : candidates_)
        if (median(c.steps) > prune_factor_ * best) c.pruned = true;
      turn_ = next_active(0);
    }
    if (tuned_rounds_ >= rounds_) decide();
  }

  // The lowest median (averaged over the ranks): the same choice everywhere.
  void decide() {
    std::vector<double> medians;
    for (const Candidate& c : candidates_) medians.push_back(c.pruned ? 1e30 : median(c.steps));
    if (comm_) {
      comm_->allreduce_sum(medians.data(), medians.size(), DType::float64,
                           "best_of choice for " + g_.str());
      for (double& m : medians) m /= comm_->size();
    }
    const auto best = static_cast<std::size_t>(std::min_element(medians.begin(), medians.end()) -
                                               medians.begin());
    for (std::size_t i = 0; i < candidates_.size(); ++i)
      candidates_[i].median_ms =
          medians[i] >= 1e30 ? median(candidates_[i].steps) * 1e3 : medians[i] * 1e3;
    choose(best, "after " + std::to_string(tuned_rounds_) + " rounds");
    save_choice();
  }

  // Keeps candidates_[i] and lets the others go (their workspaces with them).
  void choose(std::size_t i, const std::string& how) {
    all_ = candidates_;
    for (Candidate& c : all_) c.algorithm.reset();
    Candidate keep = candidates_[i];
    candidates_.assign(1, keep);
    chosen_ = &candidates_[0];
    how_ = how;
    log_info("best_of " + g_.str() + ": '" + keep.name + "' " + how);
  }

  std::string cache_key() const {
    std::string names;
    for (const Candidate& c : candidates_)
      names += (names.empty() ? "" : ",") + c.name + (c.build.empty() ? "" : "@" + c.build);
    const RuntimeInfo& rt = runtime_info();
    return rt.cpu + " | BLIS " + rt.blis_kernels + " | " + std::to_string(rt.threads) +
           " threads | " + names + " | " + g_.str();
  }

  // The cached choice's index when every rank has the same one, else -1.
  int agreed_cached_choice() {
    int mine = -1;
    if (!cache_.empty()) {
      const best_of::TuningCache cache = read_cache(cache_);
      if (!cache.usable()) cache_.clear();
      const std::string name = cache.choice(key_);
      for (std::size_t i = 0; i < candidates_.size(); ++i)
        if (!name.empty() && candidates_[i].name == name) mine = static_cast<int>(i);
    }
    if (!comm_) return mine;
    double votes[2] = {static_cast<double>(mine), static_cast<double>(mine) * mine};
    comm_->allreduce_sum(votes, 2, DType::float64, "best_of cached choice for " + g_.str());
    const double n = comm_->size(), mean = votes[0] / n;
    return mine >= 0 && votes[1] / n - mean * mean < 1e-9 && mean == mine ? mine : -1;
  }

  void save_choice() const {
    if (cache_.empty() || (comm_ && comm_->rank() != 0)) return;
    try {
      const std::filesystem::path file(cache_);
      if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
      best_of::TuningCache cache = read_cache(cache_);
      std::map<std::string, double> medians;
      for (const Candidate& c : all_) medians[c.name] = c.median_ms;
      cache.set(key_, chosen_->name, medians);
      cache.write(file);
    } catch (const std::exception& e) {
      log_warning(std::string("best_of: could not save the tuning cache: ") + e.what());
    }
  }

  std::int64_t rounds_, prune_after_;
  double prune_factor_;
  std::string cache_;
  std::string key_;
  Communicator* comm_ = nullptr;
  ConvGeometry g_;
  std::vector<Candidate> candidates_;
  std::vector<Candidate> all_;  // every candidate with its median, for the report
  Candidate* chosen_ = nullptr;
  std::size_t turn_ = 0;
  std::string how_;  // how the choice was made
  std::int64_t tuned_rounds_ = 0;
  bool step_started_ = false, step_had_backward_ = false;
  double step_seconds_ = 0;
};

Plugin* create(const Params& p, const PluginContext& ctx) { return new BestOf(p, ctx); }

}  // namespace

DTNN_PLUGIN("conv", "best_of",
            "times candidate algorithms per layer shape while training and keeps the fastest",
            R"({"candidates": [], "rounds": 10, "prune_after": 4, "prune_factor": 10.0,
                "cache_file": "default"})",
            create)
