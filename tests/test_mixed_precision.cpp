// training.precision: bf16 and fp16 products with float32 master weights, fp16's loss scaling, the
// keys' and PyDTNN's --quantize flags' errors, and training in each precision against float32.
#include <doctest/doctest.h>

#include <cmath>

#include "dtnn/experiment.hpp"
#include "dtnn/launcher_flags.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/loss_scale.hpp"
#include "dtnn/nonfinite.hpp"
#include "dtnn/registry.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

TEST_CASE("a dynamic loss scale halves at an overflow and doubles after its interval") {
  LossScale scale({.enabled = true, .initial = 1024, .dynamic = true, .growth_interval = 3});
  CHECK(scale.value() == 1024);
  CHECK_FALSE(scale.update(false));  // skip
  CHECK(scale.value() == 512);
  CHECK(scale.update(true));
  CHECK(scale.update(true));
  CHECK(scale.value() == 512);
  CHECK(scale.update(true));  // the third finite step in a row
  CHECK(scale.value() == 1024);
  CHECK(scale.update(true));
  CHECK_FALSE(scale.update(false));  // an overflow restarts the count
  CHECK(scale.update(true));
  CHECK(scale.update(true));
  CHECK(scale.value() == 512);
  CHECK(scale.overflows() == 2);
  for (int i = 0; i < 40; ++i) scale.update(false);
  CHECK(scale.value() == 1);  // never below 1

  LossScale fixed({.enabled = true, .initial = 128, .dynamic = false, .growth_interval = 1});
  CHECK_FALSE(fixed.update(false));
  CHECK(fixed.update(true));
  CHECK(fixed.value() == 128);
  LossScale off({.enabled = false, .initial = 128});
  CHECK(off.value() == 1);
  CHECK_FALSE(off.update(false));  // without scaling a non-finite step is the policy's
}

namespace {

History run(json config) {
  config["output"] = {{"progress", "none"}};
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  return e.run();
}

json fashion(const std::string& precision) {
  json j = json::parse(R"({
    "model": {"layers": [{"type": "conv2d", "filters": 8, "kernel": 3, "padding": 1, "algorithm": "i2c"},
                         {"type": "relu"}, {"type": "maxpool2d"},
                         {"type": "conv2d", "filters": 16, "kernel": 3, "padding": 1, "algorithm": "i2c"},
                         {"type": "relu"}, {"type": "maxpool2d"}, {"type": "flatten"},
                         {"type": "fc", "units": 64}, {"type": "relu"}, {"type": "fc", "units": 10},
                         {"type": "softmax"}]},
    "dataset": {"name": "mnist", "path": "/usr/share/datasets/fashion-mnist", "train_limit": 12000,
                "test_limit": 10000},
    "training": {"batch_size": 32, "epochs": 1},
    "optimizer": {"name": "adam", "learning_rate": 0.002}
  })");
  j["training"]["precision"] = precision;
  return j;
}

}  // namespace

TEST_CASE("bf16 and fp16 products train a conv net on Fashion-MNIST as float32 does") {
  // One epoch on 12,000 samples from the same seed: fp32 reaches about 82% on the 10,000 test
  // samples. The low-precision runs round every product's operands, so their paths part from
  // fp32's at the first step; such runs differ by about half a point, so the bound is 1.5 points
  // (the whole data set's comparison is docs/precision.md's).
  const double fp32 = run(fashion("fp32")).test->metrics.at("categorical_accuracy");
  const History bf16 = run(fashion("bf16"));
  const History fp16 = run(fashion("fp16"));
  const double a_bf16 = bf16.test->metrics.at("categorical_accuracy");
  const double a_fp16 = fp16.test->metrics.at("categorical_accuracy");
  MESSAGE("test accuracy fp32 " << fp32 << ", bf16 " << a_bf16 << ", fp16 " << a_fp16);
  CHECK(fp32 >= 0.80);
  CHECK(std::abs(a_bf16 - fp32) <= 0.015);
  CHECK(std::abs(a_fp16 - fp32) <= 0.015);
  CHECK_FALSE(bf16.loss_scale);  // bf16 has float32's range: no scaling
  REQUIRE(fp16.loss_scale);
  CHECK(*fp16.loss_scale == 65536.0);  // 375 steps: no overflow, no growth yet
  CHECK(json::parse(fp16.to_json())["loss_scale"]["overflow_skipped_steps"] == 0);
}

TEST_CASE("fp16: a loss scale too large overflows, the steps are skipped and the scale shrinks") {
  // Starting at 2^40, the scaled gradients pass fp16's largest value (65504) when rounded for the
  // products: each such step is skipped (parameters unchanged) and halves the scale, until the
  // gradients fit and training goes on, on_nonfinite "stop" notwithstanding.
  json j = fashion("fp16");
  j["dataset"]["train_limit"] = 3200;
  j["training"]["loss_scale"] = 1099511627776.0;
  const History h = run(j);
  CHECK(h.exit_code == 0);
  CHECK(h.stopped.empty());
  REQUIRE(h.loss_scale);
  MESSAGE("final scale " << *h.loss_scale << " after " << h.loss_scale_overflows
                         << " skipped steps");
  CHECK(h.loss_scale_overflows >= 10);
  CHECK(*h.loss_scale <= 1099511627776.0 / 1024);
  CHECK(*h.loss_scale * std::exp2(static_cast<double>(h.loss_scale_overflows)) ==
        1099511627776.0);  // halved once per skipped step, never grown (100 steps < 2000)
  CHECK(h.test->metrics.at("categorical_accuracy") >= 0.6);  // and it learnt after that
}

TEST_CASE("training.precision: the keys' errors, and PyDTNN's --quantize") {
  json j = fashion("bf16");
  j["training"]["dtype"] = "float64";
  CHECK(test::error_of([&] { run(j); })
            .find("training.precision \"bf16\" rounds float32 operands: "
                  "it needs training.dtype \"float32\", not \"float64\"") != std::string::npos);
  CHECK(test::error_of([] { run(fashion("fp8")); }).find("training.precision: expected \"fp32\"") !=
        std::string::npos);
  json bad_scale = fashion("fp16");
  bad_scale["training"]["loss_scale"] = 0.5;
  CHECK(test::error_of([&] {
          run(bad_scale);
        }).find("training.loss_scale: expected a number >= 1") != std::string::npos);
  // --quantize alone is PyDTNN's float16; --quantize-dtype needs it.
  auto s = config::flag_settings({{"quantize", "true"}});
  CHECK(s.error == "");
  REQUIRE(s.sets.size() == 1);
  CHECK(s.sets[0] == "training.precision=\"float16\"");
  s = config::flag_settings({{"quantize", "true"}, {"quantize-dtype", "bfloat16"}});
  REQUIRE(s.sets.size() == 1);
  CHECK(s.sets[0] == "training.precision=\"bfloat16\"");
  s = config::flag_settings({{"quantize-dtype", "bfloat16"}});
  CHECK(s.sets.empty());
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0].find("no effect without --quantize") != std::string::npos);
}

TEST_CASE("fc in bf16 is the float32 layer on rounded operands, with float32 gradients") {
  const Registry& registry = test::plugins();
  auto build = [&](Precision p) {
    auto layer = registry.create_as<Layer>("layer", "fc", Params(json{{"units", 7}}, "test"));
    LayerBuildContext ctx;
    ctx.input_shape = Shape{13};
    ctx.max_batch = 5;
    ctx.seed = 3;
    ctx.precision = p;
    layer->build(ctx);
    return layer;
  };
  auto low = build(Precision::bf16), high = build(Precision::fp32);
  Tensor x = Tensor::empty(Shape{5, 13}, DType::float32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.7f * float(i)) * 3;
  Tensor rounded = Tensor::empty(x.shape(), DType::float32);
  rounded.copy_from(x);
  round_to(Precision::bf16, rounded.data<float>(), rounded.data<float>(), rounded.numel());
  // The fp32 layer's weights rounded too: then both compute the same products.
  Tensor w = high->parameters()[0].value;
  round_to(Precision::bf16, w.data<float>(), w.data<float>(), w.numel());
  Tensor y_low = Tensor::empty(Shape{5, 7}, DType::float32),
         y_high = Tensor::empty(Shape{5, 7}, DType::float32);
  low->forward(x, y_low, Mode::train);
  high->forward(rounded, y_high, Mode::train);
  double worst = 0, differs_from_unrounded = 0;
  Tensor y_exact = Tensor::empty(Shape{5, 7}, DType::float32);
  auto exact = build(Precision::fp32);
  exact->forward(x, y_exact, Mode::train);
  for (std::int64_t i = 0; i < y_low.numel(); ++i) {
    worst = std::max(worst, double(std::abs(y_low.data<float>()[i] - y_high.data<float>()[i])));
    differs_from_unrounded =
        std::max(differs_from_unrounded,
                 double(std::abs(y_low.data<float>()[i] - y_exact.data<float>()[i])));
  }
  CHECK(worst <= 1e-5);                                         // float32 sums of the same products
  CHECK(differs_from_unrounded > 1e-4);                         // and it did round
  CHECK(low->parameters()[0].value.dtype() == DType::float32);  // master weights stay float32
}
