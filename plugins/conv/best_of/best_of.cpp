// best_of: PyDTNN's BestOf. Wraps candidate algorithms and, for the layer shape it serves, times
// them in rounds during the first training steps (forward and backward together: one step of one
// candidate), drops the ones more than prune_factor slower than the best after prune_after rounds,
// and after `rounds` rounds keeps the one with the lowest median step time.
//   - Under MPI the choice is collective: the ranks average their medians and all take the same.
//   - The choice is saved in a tuning cache (JSON) keyed by CPU, instruction-set level (and at
//     avx512 the vectors' width), BLIS kernel set, threads, candidate set (each with a digest of
//     its plugin file, so that a rebuilt algorithm is tuned again) and shape, and a later run with
//     the same key starts with it (tuning nothing).
//   - report() gives the table of medians and the choice, printed at the end of the run.
//   - With max_rel_error > 0, the first tuning step's input, weights and output gradient (a few
//     samples) are kept, and before the second step every candidate's three passes on them are
//     compared with the reference computed in float64 (accuracy.hpp); a candidate whose worst
//     relative error is above the bound is refused (under MPI on the ranks' mean error). When
//     every candidate is refused, the run stops with their errors.
//   - A candidate is a conv plugin's name or {"name": ..., parameters}: winograd at each tile size,
//     say, as two candidates.
//   - A candidate {"name": ..., "precision": "bf16"} computes its products in that precision
//     (an algorithm whose traits list it: training.precision, docs/precision.md), so BestOf
//     chooses per layer the fastest algorithm and precision within max_rel_error. A candidate
//     without one takes the layer's precision where it lists it, float32 elsewhere; computing in
//     the layer's lower precision, it may err by 8 of that format's unit roundoffs.
//   - objective: "time" (the default), "energy" (the joules the run's energy meter counts over a
//     step's calls, dtnn/energy_meter.hpp) or "edp" (energy times delay, step by step).
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
#include <optional>

#include "accuracy.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/digest.hpp"
#include "dtnn/energy_meter.hpp"
#include "dtnn/error.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/plugin_entries.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/trace.hpp"
#include "dtnn/vector_width.hpp"
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

// The candidates parameter: each a conv plugin's name or {"name": ..., its parameters}.
std::vector<PluginEntry> wanted_candidates(const Params& p) {
  const std::string expected = "a conv algorithm's name or {\"name\": ..., parameters}";
  const nlohmann::json& list = p.json().at("candidates");
  if (!list.is_array())
    p.fail("candidates", "a list of conv algorithms (names or {\"name\": ..., parameters})");
  std::vector<PluginEntry> wanted = plugin_entries(list, p.key_path("candidates"), expected);
  for (const PluginEntry& w : wanted)
    if (w.name == "best_of") p.fail("candidates", "conv algorithms other than best_of itself");
  return wanted;
}

// How reports and the cache name a candidate: "winograd", or "winograd(tile=4)".
std::string label(const std::string& name, const Params& params) {
  if (!params.json().is_object() || params.json().empty()) return name;
  std::string out = name + "(";
  for (const auto& [key, value] : params.json().items())
    out += (out.back() == '(' ? "" : ",") + key + "=" + value.dump();
  return out + ")";
}

struct Candidate {
  std::string name;  // as reports and the cache name it: the plugin, with its parameters if any
  std::optional<Precision> precision;  // its own "precision", if given
  std::vector<Precision> lists;        // the lower precisions its traits list (takes_precision)
  std::string build;  // a digest of the plugin's shared object: a rebuilt algorithm is tuned again
  std::shared_ptr<ConvAlgorithm> algorithm;
  std::vector<double> steps;   // seconds per training step
  std::vector<double> joules;  // per training step, when the objective reads energy
  bool pruned = false;
  bool groups = false;                       // its traits say it knows of grouped geometries
  bool refused = false;                      // above max_rel_error
  std::optional<best_of::PassErrors> error;  // as measured (averaged over the ranks)
  double median_ms = 0;                      // as decided (averaged over the ranks)
  double median_mj = 0;                      // likewise, when energy was read
};

class BestOf final : public ConvAlgorithm {
 public:
  BestOf(const Params& p, const PluginContext& ctx)
      : rounds_(p.get_int("rounds")),
        prune_after_(p.get_int("prune_after")),
        prune_factor_(p.get_double("prune_factor")),
        max_rel_error_(p.get_double("max_rel_error")),
        objective_(p.get_string("objective")),
        bound_key_(p.key_path("max_rel_error")),
        objective_key_(p.key_path("objective")),
        cache_(p.get_string("cache_file")) {
    if (rounds_ < 1) p.fail("rounds", "a positive number of rounds");
    if (prune_after_ < 1) p.fail("prune_after", "a positive number of rounds");
    if (prune_factor_ <= 1) p.fail("prune_factor", "a factor greater than 1");
    if (!(max_rel_error_ >= 0) || !std::isfinite(max_rel_error_))
      p.fail("max_rel_error", "a relative error bound >= 0 (0: no accuracy guard)");
    if (objective_ != "time" && objective_ != "energy" && objective_ != "edp")
      p.fail("objective", "\"time\", \"energy\" or \"edp\" (energy times delay)");
    if (!ctx.registry) throw Error("conv 'best_of' needs the plugin registry");
    std::vector<PluginEntry> wanted = wanted_candidates(p);
    if (wanted.empty())
      for (const std::string& n : ctx.registry->available("conv"))
        if (n != "best_of" && n != "reference") wanted.push_back({n, Params()});
    for (const auto& [n, params] : wanted) {
      Candidate c;
      c.name = label(n, params);
      for (Precision lower : {Precision::bf16, Precision::fp16})
        if (takes_precision(*ctx.registry, n, lower)) c.lists.push_back(lower);
      for (const Candidate& other : candidates_)
        if (other.name == c.name)
          p.fail("candidates", "each candidate once (" + c.name + " twice)");
      nlohmann::json own = params.json();  // its "precision" is best_of's; the rest the plugin's
      if (own.is_object() && own.contains("precision")) {
        const nlohmann::json& wanted_precision = own["precision"];
        c.precision = wanted_precision.is_string()
                          ? parse_precision(wanted_precision.get<std::string>())
                          : std::nullopt;
        if (!c.precision)
          p.fail("candidates", "a precision \"fp32\", \"bf16\" or \"fp16\" (" + c.name + ")");
        if (*c.precision != Precision::fp32 &&
            std::find(c.lists.begin(), c.lists.end(), *c.precision) == c.lists.end())
          p.fail("candidates", "a precision the algorithm computes in (" + c.name + ": '" + n +
                                   "' lists no " + to_string(*c.precision) +
                                   " path in its traits)");
        own.erase("precision");
      }
      c.algorithm = ctx.registry->create_as<ConvAlgorithm>("conv", n, Params(own, params.where()));
      c.groups = takes_groups(*ctx.registry, n);
      if (const PluginRecord* r = ctx.registry->find("conv", n);
          r && !r->file.empty() && std::filesystem::is_regular_file(r->file))
        c.build = file_digest(r->file);
      candidates_.push_back(std::move(c));
    }
    if (candidates_.empty()) p.fail("candidates", "at least one conv algorithm");
    if (max_rel_error_ > 0)
      reference_ = ctx.registry->create_as<ConvAlgorithm>("conv", "reference", Params());
    if (cache_ == "default") cache_ = default_cache_file().string();
  }

  std::string name() const override {
    return chosen_ ? "best_of(" + chosen_->name + ")" : "best_of";
  }

  bool supports(const ConvGeometry& g, ConvPass pass, std::string& why_not) const override {
    std::string reasons;
    for (const Candidate& c : candidates_) {
      std::string why = "no grouped convolutions";
      if ((g.groups == 1 || c.groups) && c.algorithm->supports(geometry_of(c, g), pass, why))
        return true;
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
      if (g.groups > 1 && !c.groups) return true;
      std::string why;
      for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
        if (!c.algorithm->supports(geometry_of(c, g), pass, why)) return true;
      return false;
    });
    if (candidates_.empty()) throw Error("conv 'best_of': no candidate supports " + g.str());
    key_ = cache_key();
    if (const int cached = agreed_cached_choice(); cached >= 0) {
      choose(static_cast<std::size_t>(cached), "from the tuning cache " + cache_);
    } else if (candidates_.size() == 1) {
      choose(0, "the only candidate");
    } else if (reference_) {
      accuracy_ = std::make_unique<best_of::AccuracySample>(g, reference_);
    }
    for (Candidate& c : candidates_) {  // they run one at a time: one workspace serves them all
      c.algorithm->set_workspace(&workspace());
      c.algorithm->prepare(geometry_of(c, g));
    }
  }

  // The largest remaining candidate's need (after the choice, the chosen one's).
  std::size_t workspace_bytes() const override {
    std::size_t most = 0;
    for (const Candidate& c : candidates_) most = std::max(most, c.algorithm->workspace_bytes());
    return most;
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    if (!chosen_) {
      next_step();
      if (accuracy_ && !chosen_) accuracy_->keep_input(x, w);
    }
    timed([&] { current().forward(x, w, y); }, false);
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    if (accuracy_ && !chosen_) accuracy_->keep_gradient(dy);
    timed([&] { current().backward_data(dy, w, dx); }, true);
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    if (accuracy_ && !chosen_) accuracy_->keep_gradient(dy);
    timed([&] { current().backward_filter(x, dy, dw); }, true);
  }

  std::string report() const override {
    if (!chosen_) return "";
    std::string out = "best_of " + g_.str() + ": '" + chosen_->name + "' " + how_;
    for (const Candidate& c : all_) {
      if (c.steps.empty()) continue;
      if (&c == &all_.front() || all_.front().steps.empty()) out += ";";
      char cell[96];
      std::snprintf(cell, sizeof cell, " %s %.3f ms", c.name.c_str(), c.median_ms);
      out += cell;
      if (objective_ != "time") {
        std::snprintf(cell, sizeof cell, " %.3f mJ", c.median_mj);
        out += cell;
      }
      if (c.error) {
        std::snprintf(cell, sizeof cell, " error %.2g", c.error->worst());
        out += cell;
      }
      out += c.name == chosen_->name ? " (chosen)"
             : c.refused             ? " (refused: error above " + bound_of(c) + ")"
             : c.pruned              ? " (pruned)"
                                     : "";
    }
    return out + "\n";
  }

 private:
  ConvAlgorithm& current() { return *(chosen_ ? chosen_ : &candidates_[turn_])->algorithm; }

  // g as candidate c computes it: in its own precision, else the layer's where it lists that, else
  // float32.
  static ConvGeometry geometry_of(const Candidate& c, const ConvGeometry& g) {
    ConvGeometry mine = g;
    const bool listed = std::find(c.lists.begin(), c.lists.end(), g.precision) != c.lists.end();
    mine.precision = c.precision ? *c.precision : listed ? g.precision : Precision::fp32;
    return mine;
  }

  // Runs f, adding its time to the step in progress when tuning.
  template <class F>
  void timed(F&& f, bool backward) {
    if (chosen_) return f();
    const double start_joules = meter_ ? meter_->joules() : 0;
    const auto start = Clock::now();
    const std::int64_t start_ns = trace::recording() ? trace::now_ns() : -1;
    f();
    step_seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
    if (meter_) step_joules_ += meter_->joules() - start_joules;
    if (start_ns >= 0)  // a tuning round's call, named by the candidate timed
      trace::record(trace::Phase::tuning,
                    trace::intern({"best_of: " + candidates_[turn_].name,
                                   nlohmann::json{{"geometry", g_.str()}}.dump()}),
                    start_ns, trace::now_ns());
    step_had_backward_ = step_had_backward_ || backward;
  }

  // Called by forward while tuning: closes the step in progress and picks the next candidate.
  void next_step() {
    if (!step_started_ && objective_ != "time") {  // the run's meter, installed by now
      meter_ = energy::current();
      if (!meter_)
        throw Error("conv 'best_of' " + g_.str() + ": " + objective_key_ + " \"" + objective_ +
                    "\" needs an energy meter, and none measures here (output.energy; "
                    "`dtnn run --profile` says why)");
    }
    if (accuracy_ && accuracy_->complete()) judge_accuracy();
    if (step_started_ && step_had_backward_) {
      candidates_[turn_].steps.push_back(step_seconds_);
      candidates_[turn_].joules.push_back(step_joules_);
      const std::size_t previous = turn_;
      turn_ = next_active(turn_ + 1);
      if (turn_ <= previous) end_of_round();
    }
    if (chosen_) return;
    step_started_ = true;
    step_seconds_ = step_joules_ = 0;
    step_had_backward_ = false;
  }

  std::size_t next_active(std::size_t from) const {
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      const std::size_t j = (from + i) % candidates_.size();
      if (!candidates_[j].pruned && !candidates_[j].refused) return j;
    }
    return 0;
  }

  void end_of_round() {
    ++tuned_rounds_;
    if (tuned_rounds_ == prune_after_) {
      double best = INFINITY;
      for (const Candidate& c : candidates_)
        if (!c.refused) best = std::min(best, score(c));
      for (Candidate& c : candidates_)
        if (score(c) > prune_factor_ * best) c.pruned = true;
      turn_ = next_active(0);
    }
    if (tuned_rounds_ >= rounds_) decide();
  }

  // Each candidate's error on the kept samples (averaged over the ranks, so that all refuse the
  // same); those above the bound leave the tuning. Their passes on the samples are not timed.
  void judge_accuracy() {
    std::vector<double> errors;
    for (Candidate& c : candidates_) {
      const best_of::PassErrors e = accuracy_->errors_of(*c.algorithm);
      errors.insert(errors.end(), {e.forward, e.backward_data, e.backward_filter});
    }
    accuracy_.reset();
    if (comm_) {
      comm_->allreduce_sum(errors.data(), errors.size(), DType::float64,
                           "best_of errors for " + g_.str());
      for (double& e : errors) e /= comm_->size();
    }
    std::string all;
    bool any_within = false;
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      Candidate& c = candidates_[i];
      c.error = best_of::PassErrors{errors[3 * i], errors[3 * i + 1], errors[3 * i + 2]};
      c.refused = !(c.error->worst() <= bound_for(c));
      any_within = any_within || !c.refused;
      all += (all.empty() ? "" : "; ") + c.name + " " + c.error->str();
    }
    if (!any_within)
      throw Error("conv 'best_of' " + g_.str() + ": no candidate within " + bound() +
                  " of the float64 reference: " + all +
                  ". Allow more error, or add a more accurate candidate (i2c, reference)");
    log_info("best_of " + g_.str() + ": relative errors " + all);
  }

  std::string bound() const {
    char text[64];
    std::snprintf(text, sizeof text, "%.3g", max_rel_error_);
    return bound_key_ + " " + text;
  }

  // The error c may have: max_rel_error, and for a candidate computing in the precision the layer
  // asked for (training.precision) at least 8 unit roundoffs of that format (bf16 0.031, fp16
  // 0.0039): the error the user chose with it. A candidate naming its own precision is held to
  // max_rel_error alone.
  double bound_for(const Candidate& c) const {
    const Precision computed = geometry_of(c, g_).precision;
    if (c.precision || computed == Precision::fp32 || computed != g_.precision)
      return max_rel_error_;
    return std::max(max_rel_error_, 8 * unit_roundoff(computed));
  }
  std::string bound_of(const Candidate& c) const {
    if (bound_for(c) == max_rel_error_) return bound();
    char text[96];
    std::snprintf(text, sizeof text, "%.3g (8 unit roundoffs of %s)", bound_for(c),
                  to_string(g_.precision));
    return text;
  }

  // What the objective minimises for c: the median step's seconds or joules, or the median of
  // the steps' joules x seconds.
  double score(const Candidate& c) const {
    if (objective_ == "time") return median(c.steps);
    if (objective_ == "energy") return median(c.joules);
    std::vector<double> edp;
    for (std::size_t i = 0; i < c.steps.size() && i < c.joules.size(); ++i)
      edp.push_back(c.steps[i] * c.joules[i]);
    return median(edp);
  }

  // The lowest score (averaged over the ranks): the same choice everywhere.
  void decide() {
    std::vector<double> figures;  // per candidate: score, median seconds, median joules
    for (const Candidate& c : candidates_)
      figures.insert(figures.end(), {c.pruned || c.refused ? 1e30 : score(c), median(c.steps),
                                     c.joules.empty() ? 0.0 : median(c.joules)});
    if (comm_) {
      comm_->allreduce_sum(figures.data(), figures.size(), DType::float64,
                           "best_of choice for " + g_.str());
      for (double& m : figures) m /= comm_->size();
    }
    std::size_t best = 0;
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      if (figures[3 * i] < figures[3 * best]) best = i;
      candidates_[i].median_ms = figures[3 * i + 1] * 1e3;
      candidates_[i].median_mj = figures[3 * i + 2] * 1e3;
    }
    choose(best, "after " + std::to_string(tuned_rounds_) + " rounds" +
                     (objective_ == "time" ? "" : " (objective " + objective_ + ")"));
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
    char guard[48] = "";
    if (max_rel_error_ > 0)
      std::snprintf(guard, sizeof guard, " | max_rel_error %.3g", max_rel_error_);
    // The level the candidates run at, and at avx512 their vectors' width (dtnn/vector_width.hpp).
    std::string level = isa::name(isa::ceiling());
    if (isa::ceiling() == isa::Level::avx512)
      level += " " + std::to_string(avx512_vector_width().bytes) + "-byte vectors";
    return rt.cpu + " | " + level + " | BLIS " + rt.blis_kernels + " | " +
           std::to_string(rt.threads) + " threads | " + names + " | " + g_.str() + guard +
           (objective_ == "time" ? "" : " | objective " + objective_);
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
      std::map<std::string, double> medians, errors;
      for (const Candidate& c : all_) {
        medians[c.name] = c.median_ms;
        if (c.error) errors[c.name] = c.error->worst();
      }
      cache.set(key_, chosen_->name, medians, errors);
      cache.write(file);
    } catch (const std::exception& e) {
      log_warning(std::string("best_of: could not save the tuning cache: ") + e.what());
    }
  }

  std::int64_t rounds_, prune_after_;
  double prune_factor_;
  double max_rel_error_;   // 0: no accuracy guard
  std::string objective_;  // time, energy, edp
  std::string bound_key_;  // where max_rel_error was set, for messages
  std::string objective_key_;
  EnergyMeter* meter_ = nullptr;  // the run's, with an objective that reads energy
  std::string cache_;
  std::shared_ptr<ConvAlgorithm> reference_;           // with the accuracy guard
  std::unique_ptr<best_of::AccuracySample> accuracy_;  // while the samples are kept and unjudged
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
  double step_seconds_ = 0, step_joules_ = 0;
};

Plugin* create(const Params& p, const PluginContext& ctx) { return new BestOf(p, ctx); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "conv", .name = "best_of",
                   .description =
                       "times candidate algorithms per layer shape while training and "
                       "keeps the fastest",
                   .parameters = R"({"candidates": [], "rounds": 10, "prune_after": 4,
                                     "prune_factor": 10.0, "max_rel_error": 0.001,
                                     "objective": "time", "cache_file": "default"})",
                   .traits = R"({"groups": true, "precisions": ["bf16", "fp16"]})",
                   .factory = create)
