// training.on_nonfinite: a loss or gradient that is not finite stops training with a message that
// names where it started, skips the step, or is ignored.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

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
