// Sequence models end to end: a causal transformer trained from an experiment learns what only
// attention can give it, and the model file takes its sizes from the dataset.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "dtnn/experiment.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/rng.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// Blocks of 16 random letters followed by the same 16 letters: in windows of 32 aligned on the
// blocks, the second half is predictable only by looking 16 positions back.
std::filesystem::path copy_task_text(std::int64_t blocks) {
  Rng rng(5);
  std::string text;
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::string half;
    for (int i = 0; i < 16; ++i) half += static_cast<char>('a' + rng.below(16));
    text += half + half;
  }
  text += 'a';  // the last window's next token
  const auto file = test::temp_dir("copy_task") / "copy.txt";
  std::ofstream(file) << text;
  return file;
}

json small_lm(const std::filesystem::path& text) {
  json j = json::parse(R"({
    "model": {"layers": [
      {"type": "embedding", "vocab": "$vocab", "units": 32},
      {"type": "positional_encoding", "kind": "learned", "weights_initializer": "small_normal"},
      {"type": "add", "paths": [[{"type": "layer_norm"},
                                 {"type": "multi_head_attention", "heads": 2, "causal": true}], []]},
      {"type": "add", "paths": [[{"type": "layer_norm"}, {"type": "fc", "units": 64, "flatten": false},
                                 {"type": "gelu", "approximate": "tanh"},
                                 {"type": "fc", "units": 32, "flatten": false}], []]},
      {"type": "layer_norm"},
      {"type": "fc", "units": "$classes", "flatten": false},
      {"type": "log_softmax"}]},
    "dataset": {"name": "text", "context": 32, "test_every": 10},
    "training": {"batch_size": 32, "epochs": 16, "seed": 3},
    "optimizer": {"name": "adam", "learning_rate": 0.003},
    "loss": "nll",
    "metrics": ["token_accuracy", "perplexity"],
    "output": {"progress": "none"}
  })");
  j["dataset"]["path"] = text.string();
  return j;
}

}  // namespace

TEST_CASE("a causal transformer learns to copy: the second half of each block from 16 back") {
  // Of a window's 32 targets, 16 are copies; the other 16 are random letters (1 in 16 by chance).
  // Attention that learned the copy scores about 16/32 + 16/32/16 = 0.53 and a perplexity of
  // exp((16 ln 16 + 16 * 0) / 32) = 4; without it (any model of the previous token and the
  // position) about 1/16 and 16. It learns the copy around the 10th epoch (seed 3).
  const ExperimentConfig c = make_experiment(small_lm(copy_task_text(2000)), {}, "test");
  Experiment e(c, test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  const double accuracy = h.test->metrics.at("token_accuracy");
  MESSAGE("test token accuracy " << accuracy << ", perplexity "
                                 << h.test->metrics.at("perplexity"));
  CHECK(accuracy > 0.5);
  CHECK(h.test->metrics.at("perplexity") < 4.4);
}

TEST_CASE("a model file takes its vocabulary and classes from the dataset, or says what is wrong") {
  json j = small_lm(copy_task_text(20));
  j["training"]["epochs"] = 0;
  {
    Experiment e(make_experiment(j, {}, "test"), test::plugins());
    CHECK(e.model().output_shape() == Shape{32, 16});  // 16 letters
  }
  json images = j;
  images["dataset"] = {{"name", "synthetic"}, {"input_shape", {32}}, {"classes", 5}};
  CHECK(
      test::error_of([&] { Experiment e(make_experiment(images, {}, "test"), test::plugins()); }) ==
      "config: model: layers[0].vocab: '$vocab' is not a size this run's dataset gives (it gives: "
      "$classes)");
  json mismatch = j;
  mismatch["model"]["layers"][5]["units"] = 7;
  CHECK(test::error_of(
            [&] { Experiment e(make_experiment(mismatch, {}, "test"), test::plugins()); }) ==
        "config: the model's output (32, 7) does not match dataset 'text', which labels each of "
        "(32,) "
        "positions with one of 16 classes: expected (32, 16)");
}

TEST_CASE("causal attention: a position's output never depends on a later position") {
  // 150 positions: three query blocks. Changing position 100's input changes the outputs from
  // 100 on and none before it.
  auto layer = test::plugins().create_as<Layer>(
      "layer", "multi_head_attention", Params(json{{"heads", 2}, {"causal", true}}, "test"));
  LayerBuildContext ctx;
  ctx.input_shape = Shape{150, 8};
  ctx.max_batch = 2;
  ctx.seed = 4;
  layer->build(ctx);
  Tensor x = Tensor::empty(Shape{2, 150, 8}, DType::float32);
  for (std::int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = float(std::sin(0.37 * double(i)));
  Tensor y = Tensor::empty(x.shape(), DType::float32),
         y2 = Tensor::empty(x.shape(), DType::float32);
  layer->forward(x, y, Mode::eval);
  for (std::int64_t n = 0; n < 2; ++n) x.data<float>()[(n * 150 + 100) * 8 + 3] += 1.0f;
  layer->forward(x, y2, Mode::eval);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t t = 0; t < 150; ++t) {
      double change = 0;
      for (std::int64_t j = 0; j < 8; ++j) {
        const std::int64_t i = (n * 150 + t) * 8 + j;
        change += std::abs(double(y.data<float>()[i]) - double(y2.data<float>()[i]));
      }
      CAPTURE(t);
      if (t < 100)
        CHECK(change == 0.0);
      else
        CHECK(change > 0.0);
    }
}

TEST_CASE(
    "a small vision transformer (vit_tiny) learns Fashion-MNIST: 65% after one epoch of 10,000") {
  // 4x4 patches, 4 encoder blocks, mean pooling: 70% test accuracy here after one epoch on 9,000
  // samples (chance: 10%).
  const json config = json::parse(R"({"model": "vit_tiny",
      "dataset": {"name": "mnist", "path": "/usr/share/datasets/fashion-mnist", "train_limit": 10000,
                  "test_limit": 2000},
      "training": {"batch_size": 64, "epochs": 1, "seed": 1},
      "optimizer": {"name": "adam", "learning_rate": 0.001},
      "output": {"progress": "none"}})");
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  MESSAGE("vit_tiny test accuracy " << h.test->metrics.at("categorical_accuracy"));
  CHECK(h.test->metrics.at("categorical_accuracy") >= 0.65);
}

TEST_CASE("a BERT-style encoder learns the masked characters, the only positions with targets") {
  // Lines of "0123456789": a masked digit follows from its neighbours (the mask token, the last
  // id, hides 80% of the chosen positions; the loss and the metric read those positions only).
  const auto file = test::temp_dir("masked_lm") / "digits.txt";
  {
    std::ofstream out(file);
    for (int i = 0; i < 600; ++i) out << "0123456789\n";
  }
  json config = json::parse(R"({
    "model": {"layers": [
      {"type": "embedding", "vocab": "$vocab", "units": 32},
      {"type": "positional_encoding", "kind": "learned", "weights_initializer": "small_normal"},
      {"type": "add", "paths": [[{"type": "multi_head_attention", "heads": 2}], []]},
      {"type": "layer_norm"},
      {"type": "add", "paths": [[{"type": "fc", "units": 64, "flatten": false},
                                 {"type": "gelu", "approximate": "tanh"},
                                 {"type": "fc", "units": 32, "flatten": false}], []]},
      {"type": "layer_norm"},
      {"type": "fc", "units": "$classes", "flatten": false}, {"type": "log_softmax"}]},
    "dataset": {"name": "text", "context": 22, "objective": "masked", "mask_fraction": 0.15},
    "training": {"batch_size": 16, "epochs": 12, "seed": 2},
    "optimizer": {"name": "adam", "learning_rate": 0.003},
    "loss": "nll", "metrics": ["token_accuracy"],
    "output": {"progress": "none"}})");
  config["dataset"]["path"] = file.string();
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  MESSAGE("masked-position accuracy " << h.test->metrics.at("token_accuracy"));
  CHECK(h.test->metrics.at("token_accuracy") > 0.9);  // chance: 1 in 11
}

TEST_CASE("kl_divergence: without smoothing it is nll, with smoothing, the hand-computed value") {
  // Two rows of 3 log-probabilities, class ids 2 and 0.
  const std::vector<double> logp = {std::log(0.2), std::log(0.3), std::log(0.5),
                                    std::log(0.6), std::log(0.3), std::log(0.1)};
  Tensor y = Tensor::empty(Shape{2, 3}, DType::float64),
         t = Tensor::empty(Shape{2}, DType::float64);
  std::copy(logp.begin(), logp.end(), y.data<double>());
  t.data<double>()[0] = 2;
  t.data<double>()[1] = 0;
  auto make = [](const std::string& name, const json& params) {
    return test::plugins().create_as<Loss>("loss", name, Params(params, "test"));
  };
  const double nll = make("nll", json::object())->forward(y, t);
  CHECK(nll == doctest::Approx(-(std::log(0.5) + std::log(0.6)) / 2));
  CHECK(make("kl_divergence", json::object())->forward(y, t) == doctest::Approx(nll));
  // e = 0.3 over 3 classes: q = (0.1, 0.1, 0.8) and (0.8, 0.1, 0.1).
  double expected = 0;
  const double q[2][3] = {{0.1, 0.1, 0.8}, {0.8, 0.1, 0.1}};
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 3; ++j) expected += q[r][j] * (std::log(q[r][j]) - logp[r * 3 + j]);
  CHECK(make("kl_divergence", json{{"label_smoothing", 0.3}})->forward(y, t) ==
        doctest::Approx(expected / 2));
}
