// training.on_nonfinite: a loss or gradient that is not finite stops training with a message that
// names where it started, skips the step, or is ignored.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dtnn/experiment.hpp"
#include "dtnn/model.hpp"
#include "dtnn/nonfinite.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// SGD at 1e20: the first step's update is finite, and makes the next batch overflow in layer 3.
json exploding_experiment(const std::string& policy) {
  json j = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 16}, {"type": "relu"},
                         {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [6, 6, 1], "classes": 3, "train_samples": 64,
                "test_samples": 16},
    "training": {"batch_size": 8, "epochs": 2, "evaluate": false},
    "optimizer": {"name": "sgd", "learning_rate": 1e20},
    "output": {"progress": "none"}
  })");
  j["training"]["on_nonfinite"] = policy;
  return j;
}

bool parameters_finite(Experiment& e) {
  for (const Parameter& p : e.model().parameters())
    if (!all_finite(p.value)) return false;
  return true;
}

}  // namespace

TEST_CASE("all_finite finds a NaN or an infinity at any position, float32 and float64") {
  for (DType dtype : {DType::float32, DType::float64})
    for (std::int64_t n : {1, 7, 16, 33, 1000})
      for (double bad :
           {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
            -std::numeric_limits<double>::infinity()}) {
        Tensor t = Tensor::zeros(Shape{n}, dtype);
        CHECK(all_finite(t));
        for (std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
          dispatch_dtype(dtype, [&](auto z) {
            using T = decltype(z);
            t.fill_zero();
            t.data<T>()[at] = static_cast<T>(bad);
          });
          CAPTURE(n);
          CAPTURE(at);
          CHECK_FALSE(all_finite(t));
        }
      }
}

TEST_CASE("every level's finite check finds one NaN or infinity anywhere, and passes extremes") {
  // The kernels sum x - x over four vector streams and a scalar tail: a bad value in any lane of
  // any stream, or in the tail, must show; the largest, smallest and subnormal values must not.
  int levels = 0;
  for (isa::Level level : finite_kernels().built()) {
    const FiniteKernels* k = finite_kernels().at(level);
    if (!k) continue;  // this CPU does not run it
    ++levels;
    CAPTURE(isa::name(level));
    auto check = [&](auto z) {
      using T = decltype(z);
      using limits = std::numeric_limits<T>;
      auto run = [&](const std::vector<T>& v) {
        if constexpr (sizeof(T) == 4)
          return k->f32(v.data(), static_cast<std::int64_t>(v.size()));
        else
          return k->f64(v.data(), static_cast<std::int64_t>(v.size()));
      };
      for (std::int64_t n : {0, 1, 5, 63, 64, 65, 130, 257}) {
        std::vector<T> v(static_cast<std::size_t>(n));
        const T extremes[] = {limits::max(), -limits::max(), limits::denorm_min(),
                              T(-0.0),       limits::min(),  T(1)};
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = extremes[i % 6];
        CAPTURE(n);
        CHECK(run(v));
        for (T bad : {limits::quiet_NaN(), limits::infinity(), -limits::infinity()})
          for (std::size_t at = 0; at < v.size(); ++at) {
            const T kept = v[at];
            v[at] = bad;
            CAPTURE(at);
            CHECK_FALSE(run(v));
            v[at] = kept;
          }
      }
    };
    check(float{});
    check(double{});
  }
  CHECK(levels >= 1);
}

TEST_CASE("on_nonfinite stop: training ends at the first bad batch, naming where it went bad") {
  Experiment e(make_experiment(exploding_experiment("stop"), {}, "test"), test::plugins());
  const History h = e.run();
  CHECK(h.exit_code == 1);
  CHECK(h.epochs.empty());
  CHECK(h.stopped.find("training stopped at epoch 1, batch 2 of 8") != std::string::npos);
  CHECK(h.stopped.find("the first non-finite value: layer 4 (fc) output") != std::string::npos);
  CHECK(h.stopped.find("learning rate 1e+20") != std::string::npos);
  CHECK(parameters_finite(e));  // the bad batch changed nothing
  CHECK(json::parse(h.to_json())["stopped"] == h.stopped);
}

TEST_CASE("on_nonfinite skip_batch: bad batches change nothing, and the run goes on") {
  Experiment e(make_experiment(exploding_experiment("skip_batch"), {}, "test"), test::plugins());
  const History h = e.run();
  CHECK(h.stopped.empty());
  CHECK(h.exit_code == 0);
  REQUIRE(h.epochs.size() == 2);
  CHECK(h.skipped_batches == 15);  // every batch after the first
  CHECK(parameters_finite(e));
  CHECK(std::isfinite(h.epochs[0].loss));  // the skipped batches are not in the loss
}

TEST_CASE("on_nonfinite ignore: training goes on into NaN (what the checks prevent)") {
  Experiment e(make_experiment(exploding_experiment("ignore"), {}, "test"), test::plugins());
  const History h = e.run();
  CHECK(h.stopped.empty());
  REQUIRE(h.epochs.size() == 2);
  CHECK_FALSE(parameters_finite(e));
}

TEST_CASE("training.on_nonfinite accepts stop, skip_batch and ignore only") {
  CHECK(test::error_of([] {
          make_experiment(exploding_experiment("sometimes"), {}, "test");
        }).find("training.on_nonfinite: expected \"stop\", \"skip_batch\" or \"ignore\"") !=
        std::string::npos);
}
