// Sequence models end to end: a causal transformer trained from an experiment learns what only
// attention can give it, and the model file takes its sizes from the dataset.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "dtnn/experiment.hpp"
#include "dtnn/layer.hpp"
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
