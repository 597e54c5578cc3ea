// The units a training run is made of, each alone: the order of an epoch's samples and its cut
// between ranks, the ranks' counts, the steady-state throughput, what progress prints, and the
// gradient sinks a step's backward writes into.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "dtnn/batch_plan.hpp"
#include "dtnn/epoch_order.hpp"
#include "dtnn/gradient_sink.hpp"
#include "dtnn/model_sync.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/progress.hpp"
#include "dtnn/throughput.hpp"

using namespace dtnn;

TEST_CASE(
    "epoch order: every rank's parts of a step are contiguous, differ by at most one sample, "
    "and an epoch holds each sample once") {
  for (int ranks : {1, 2, 3}) {
    CAPTURE(ranks);
    EpochOrder order(/*train*/ 23, /*epoch*/ 23, /*global batch*/ 7, ranks);
    CHECK(order.steps() == 4);  // 7 + 7 + 7 + 2
    order.begin_epoch(5, 0, true);
    std::multiset<std::int64_t> seen;
    for (std::int64_t s = 0; s < order.steps(); ++s) {
      std::int64_t next = s * 7, smallest = 100, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        const auto [first, count] = order.part(s, r);
        CHECK(first == next);  // contiguous, in rank order
        next += count;
        smallest = std::min(smallest, count);
        largest = std::max(largest, count);
        for (std::int64_t i : order.indices(s, r)) seen.insert(i);
      }
      CHECK(next == std::min<std::int64_t>(7 * (s + 1), 23));
      CHECK(largest - smallest <= 1);
    }
    CHECK(seen.size() == 23);
    CHECK(std::set<std::int64_t>(seen.begin(), seen.end()).size() == 23);
  }
}

TEST_CASE(
    "epoch order: the same seed and epoch give the same order, epochs differ, a percentage "
    "above 1 goes through the split again") {
  EpochOrder a(50, 50, 10, 1), b(50, 50, 10, 1);
  a.begin_epoch(9, 3, true);
  b.begin_epoch(9, 3, true);
  CHECK(std::vector(a.indices(0, 0).begin(), a.indices(0, 0).end()) ==
        std::vector(b.indices(0, 0).begin(), b.indices(0, 0).end()));
  const std::vector<std::int64_t> epoch3(a.indices(0, 0).begin(), a.indices(0, 0).end());
  a.begin_epoch(9, 4, true);
  CHECK(std::vector(a.indices(0, 0).begin(), a.indices(0, 0).end()) != epoch3);
  EpochOrder over(4, 10, 5, 1);  // 2.5 times the split
  over.begin_epoch(1, 0, false);
  const std::vector<std::int64_t> all(over.indices(0, 0).begin(), over.indices(1, 0).end());
  CHECK(all == std::vector<std::int64_t>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1});
}

TEST_CASE("batch plan: the global batch, and each rank's part as the epoch order cuts it") {
  CHECK(BatchPlan::of(64, 0, 4).global == 256);  // batch_size on every rank
  CHECK(BatchPlan::of(64, 0, 4).rank_max == 64);
  CHECK(BatchPlan::of(64, 100, 3).global == 100);  // a global batch cut three ways: 33, 33, 34
  CHECK(BatchPlan::of(64, 100, 3).rank_max == 34);
  for (const auto& [batch, global, ranks] :
       {std::tuple{8, 0, 1}, {8, 0, 3}, {8, 10, 4}, {8, 7, 7}, {1, 13, 5}, {5, 96, 8}}) {
    const BatchPlan plan = BatchPlan::of(batch, global, ranks);
    const EpochOrder order(/*train*/ 3 * plan.global, /*epoch*/ 3 * plan.global, plan.global,
                           ranks);
    std::int64_t largest = 0, total = 0;
    for (int r = 0; r < ranks; ++r) {
      const std::int64_t part = order.part(/*step*/ 1, r).second;
      CHECK(plan.share(r) == part);
      largest = std::max(largest, part);
      total += part;
    }
    CHECK(plan.rank_max == largest);  // what the model is sized for: no rank takes more
    CHECK(total == plan.global);
  }
}

TEST_CASE("rank counts: a step adds to the counts since the last sync and of the run") {
  RankCounts c(3);
  c.step = {2, 0, 1};
  c.add_step();
  c.step = {1, 1, 1};
  c.add_step();
  CHECK(c.since_sync == std::vector<std::int64_t>{3, 1, 2});
  CHECK(c.trained == std::vector<std::int64_t>{3, 1, 2});
  CHECK(RankCounts::available(std::vector<std::int64_t>{2, 0, 1}) == 2);
}

TEST_CASE("steady-state throughput leaves out the first steps of the run") {
  SteadyThroughput t;
  for (std::int64_t step = 0; step < SteadyThroughput::kWarmupSteps; ++step) t.add(10.0, 1, step);
  CHECK(t.samples_per_second() == 0.0);
  t.add(0.5, 100, SteadyThroughput::kWarmupSteps);
  t.add(1.5, 300, SteadyThroughput::kWarmupSteps + 1);
  CHECK(t.samples_per_second() == doctest::Approx(200.0));
}

TEST_CASE("progress: rates with thousands grouped, metrics after their prefix") {
  CHECK(format_rate(36101.6) == "36,102");
  CHECK(format_metrics("val_", 0.25, {{"categorical_accuracy", 0.875}}) ==
        "val_loss 0.2500  val_categorical_accuracy 0.8750");
}

namespace {

// Counts its steps and updates: w -= 1 for each update.
class Counting final : public Optimizer {
 public:
  int steps = 0, updates = 0;
  void build(std::span<const Parameter>) override {}
  void begin_step() override { ++steps; }
  void update(std::size_t, const Parameter& p) override {
    ++updates;
    for (std::int64_t i = 0; i < p.value.numel(); ++i) p.value.data<double>()[i] -= 1;
    Tensor(p.grad).fill_zero();
  }
  double learning_rate() const override { return 1; }
  void set_learning_rate(double) override {}
};

std::vector<Parameter> three() {
  std::vector<Parameter> ps;
  for (int i = 0; i < 3; ++i)
    ps.push_back({"p" + std::to_string(i), Tensor::zeros(Shape{2}, DType::float64),
                  Tensor::zeros(Shape{2}, DType::float64)});
  for (auto& p : ps) p.grad.data<double>()[0] = 0.5;
  return ps;
}

}  // namespace

TEST_CASE("gradient sinks: update when ready, stop at the first non-finite, or all or nothing") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SUBCASE("update when ready: each layer's parameters as backward finishes them") {
    Counting opt;
    auto ps = three();
    auto sink = local_gradient_sink(opt, ps, NonFinitePolicy::stop);
    sink->begin(1.0, true);
    sink->gradients_ready(2, 1);  // backward goes last layer first
    CHECK(opt.updates == 1);
    CHECK(ps[2].value.data<double>()[0] == -1);
    sink->gradients_ready(0, 2);
    CHECK(sink->finish());
    CHECK(opt.steps == 1);
    CHECK(opt.updates == 3);
  }
  SUBCASE("checking (stop): nothing is updated from the first non-finite gradient on") {
    Counting opt;
    auto ps = three();
    ps[1].grad.data<double>()[1] = nan;
    auto sink = local_gradient_sink(opt, ps, NonFinitePolicy::stop);
    sink->begin(1.0, true);
    sink->gradients_ready(2, 1);
    sink->gradients_ready(1, 1);
    sink->gradients_ready(0, 1);
    CHECK_FALSE(sink->finish());
    CHECK(opt.updates == 1);  // the last layer's, before the bad one
    CHECK(ps[0].value.data<double>()[0] == 0);
    CHECK(ps[0].grad.data<double>()[0] == 0);  // zeroed for the next step
  }
  SUBCASE("all or nothing (skip_batch): the update after backward, when every gradient is finite") {
    Counting opt;
    auto ps = three();
    auto sink = local_gradient_sink(opt, ps, NonFinitePolicy::skip_batch);
    sink->begin(1.0, true);
    sink->gradients_ready(0, 3);
    CHECK(opt.updates == 0);
    CHECK(sink->finish());
    CHECK(opt.updates == 3);
    ps[2].grad.data<double>()[0] = nan;
    sink->begin(1.0, true);
    CHECK_FALSE(sink->finish());
    CHECK(opt.updates == 3);
    CHECK(ps[2].grad.data<double>()[0] == 0);
  }
  SUBCASE("a loss that is not finite: no optimizer step is begun") {
    Counting opt;
    auto ps = three();
    auto sink = local_gradient_sink(opt, ps, NonFinitePolicy::ignore);
    sink->begin(1.0, false);
    CHECK(opt.steps == 0);
  }
}
