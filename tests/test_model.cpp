#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <span>
#include <vector>

#include "dtnn/config.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {
Model build(const ModelSpec& spec, Shape input, Layout layout = Layout::nhwc,
            std::int64_t batch = 4) {
  ModelOptions o;
  o.layout = layout;
  o.max_batch = batch;
  return Model(spec, o, input, test::plugins());
}
}  // namespace

TEST_CASE("the memory table: activations, parameters, gradients and optimizer state per layer") {
  // simplecnn at batch 4 (the default build's): the second conv2d's output 24x24x8 floats a sample
  // (0.070 MiB at 4), held by the relu that runs in place over it; fc 1152->128's 147,584
  // parameters (0.563 MiB), and an Adam-like state of two values per parameter shared out by size
  // (1.126 MiB on that fc).
  Model cnn = build(test::zoo_model("simplecnn"), Shape{28, 28, 1}, Layout::nhwc, 4);
  const std::string table = cnn.memory_table(2 * 149210 * 4);
  CAPTURE(table);
  CHECK(table.find("|     3 | conv2d    |           0.000 |") != std::string::npos);
  CHECK(table.find("|     4 | relu      |           0.070 |") != std::string::npos);
  CHECK(table.find("|     6 | flatten   |           0.000 |") != std::string::npos);  // a view
  CHECK(table.find("|     7 | fc        |           0.000 |          0.563 |         0.563 |"
                   "         1.126 |") != std::string::npos);
  CHECK(table.find("|     8 | relu      |           0.002 |") != std::string::npos);
  CHECK(table.find("parameters 0.569, gradients 0.569, optimizer state 1.138") !=
        std::string::npos);
}

TEST_CASE("shipped models have PyDTNN's parameter counts") {
  Model cnn = build(test::zoo_model("simplecnn"), Shape{28, 28, 1});
  CHECK(cnn.parameter_count() == 149210);
  CHECK(cnn.output_shape() == Shape{10});
  CHECK(cnn.summary().find("Total parameters: 149,210 (596,840 bytes") != std::string::npos);
  Model mlp = build(test::zoo_model("simplemlp"), Shape{28, 28, 1});
  CHECK(mlp.parameter_count() == 669706);
  Model nchw = build(test::zoo_model("simplecnn"), Shape{1, 28, 28}, Layout::nchw);
  CHECK(nchw.parameter_count() == 149210);
}

TEST_CASE("repeat blocks expand in place") {
  json j = json::parse(
      R"({"layers": [{"repeat": 3, "layers": [{"type": "fc", "units": 4}, {"type": "relu"}]},
                                      {"type": "fc", "units": 2}]})");
  ModelSpec spec = parse_model_spec(j, "m.json");
  CHECK(spec.layers.size() == 7);
  Model m = build(spec, Shape{4});
  CHECK(m.parameter_count() == 3 * (16 + 4) + 10);
}

TEST_CASE("model file errors name the entry") {
  CHECK(test::error_of([] {
          parse_model_spec(json::parse(R"({"layers": [{"units": 3}]})"), "m.json");
        }) == "m.json: layers[0]: expected a \"type\" string naming the layer (e.g. \"conv2d\")");
  CHECK(test::error_of([] { parse_model_spec(json::parse(R"({"layer": []})"), "m.json"); }) ==
        "m.json: unknown key 'layer' (did you mean 'layers'?)");
  CHECK(test::error_of([] {
          parse_model_spec(json::parse(R"({"layers": [{"repeat": 0, "layers": []}]})"), "m.json");
        }) == "m.json: layers[0].repeat: expected a positive integer, got 0");
  ModelSpec bad = parse_model_spec(
      json::parse(R"({"layers": [{"type": "fc", "units": 3, "unit": 4}]})"), "m.json");
  CHECK(test::error_of([&] { build(bad, Shape{4}); }) ==
        "m.json: layers[0].unit: unknown parameter of layer 'fc' (did you mean 'units'?); valid: "
        "biases_initializer, flatten, gelu, units, use_bias, weights_initializer");
  ModelSpec pool =
      parse_model_spec(json::parse(R"({"layers": [{"type": "maxpool2d"}]})"), "m.json");
  CHECK(test::error_of([&] { build(pool, Shape{12}); }) ==
        "m.json: layers[0] (maxpool2d on input (12,)): expects image input (H, W, C), got (12,)");
  // A 2x2 window on a 1x1 image (VGG's fifth pooling on 28x28 input) does not fit: refused, not
  // rounded to a 1x1 output.
  for (const Shape& input : {Shape{1, 1, 4}, Shape{1, 5, 4}})
    CHECK(test::error_of([&] { build(pool, input); }).find("larger than the input") !=
          std::string::npos);
  CHECK(build(pool, Shape{2, 3, 4}).output_shape() == Shape{1, 1, 4});
  ModelSpec shaped = parse_model_spec(
      json::parse(R"({"input_shape": [32, 32, 3], "layers": [{"type": "relu"}]})"), "m.json");
  CHECK(test::error_of([&] {
          build(shaped, Shape{28, 28, 1});
        }).find("input_shape (32, 32, 3) does not match the dataset's samples (28, 28, 1)") !=
        std::string::npos);
}

TEST_CASE("a pinned variant takes its base's layers and pins their shape and classes") {
  // PyDTNN 1.x's sized names over 3.x's dataset-generic models.
  const ModelSpec generic = load_model_spec(resolve_model_path("resnet20", ""));
  CHECK(generic.name == "resnet20");
  CHECK(!generic.input_shape);
  CHECK(!generic.classes);
  const ModelSpec pinned = load_model_spec(resolve_model_path("resnet20_cifar10", ""));
  CHECK(pinned.name == "resnet20_cifar10");
  CHECK(pinned.file.filename() == "resnet20_cifar10.json");
  REQUIRE(pinned.input_shape);
  CHECK(*pinned.input_shape == Shape{32, 32, 3});
  CHECK(pinned.classes == 10);
  CHECK(pinned.layers.size() == generic.layers.size());
  CHECK(pinned.layers.back().params.json() == generic.layers.back().params.json());

  // The generic model at CIFAR-100's classes; the pinned one refuses another shape.
  ModelSpec hundred = generic;
  substitute_sizes(hundred.layers, {{"$classes", 100}});
  CHECK(build(hundred, Shape{32, 32, 3}).output_shape() == Shape{100});
  ModelSpec ten = pinned;
  substitute_sizes(ten.layers, {{"$classes", *ten.classes}});
  CHECK(test::error_of([&] {
          build(ten, Shape{64, 64, 3});
        })
            .find("resnet20_cifar10.json: input_shape (32, 32, 3) does not match the dataset's "
                  "samples (64, 64, 3)") != std::string::npos);

  // An inline variant, its own shape and name over its base's.
  const ModelSpec inline_variant = parse_model_spec(
      json::parse(R"({"base": "simplemlp", "input_shape": [32, 32, 3], "classes": 100})"),
      "e.json");
  CHECK(inline_variant.name.empty());
  CHECK(*inline_variant.input_shape == Shape{32, 32, 3});
  CHECK(inline_variant.classes == 100);

  auto error = [](const char* text) {
    return test::error_of([&] { parse_model_spec(json::parse(text), "m.json"); });
  };
  CHECK(
      error(R"({"base": "simplemlp", "layers": [{"type": "relu"}]})") ==
      "m.json: has both \"base\" and \"layers\": a pinned variant takes its layers from its base");
  CHECK(error(R"({"base": 3})") == "m.json: base: expected a model name or file, got 3");
  CHECK(error(R"({"base": "nosuchmodel"})").starts_with("config: base: cannot find 'nosuchmodel'"));
  CHECK(error(R"({"base": "simplemlp", "classes": 0})") ==
        "m.json: classes: expected a positive integer, got 0");
  CHECK(error(R"({"layers": [{"type": "relu"}], "classes": "ten"})") ==
        "m.json: classes: expected a positive integer, got \"ten\"");
  // A base that names itself stops at the depth limit with an error, not a stack overflow.
  const auto loop = std::filesystem::temp_directory_path() / "dtnn_model_loop.json";
  { std::ofstream(loop) << R"({"base": ")" << loop.string() << R"("})"; }
  CHECK(test::error_of([&] {
          load_model_spec(loop);
        }).find("bases deep (does a base name itself?)") != std::string::npos);
  std::filesystem::remove(loop);
}

TEST_CASE("backward reports each layer's parameters once, with their gradients final") {
  // The trainer updates a layer's parameters from inside backward; that is only sound if every
  // gradient is complete when reported and no parameter is reported twice.
  Model m = build(test::zoo_model("simplecnn"), Shape{28, 28, 1});
  Tensor x = Tensor::empty(Shape{4, 28, 28, 1}, DType::float32);
  Tensor y = Tensor::zeros(Shape{4, 10}, DType::float32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = float((i * 37) % 101) / 101;
  for (int r = 0; r < 4; ++r) y.data<float>()[r * 10 + r] = 1;
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());

  m.forward(x, Mode::train);
  m.backward(*loss, y);
  std::vector<std::vector<float>> expected;
  for (const auto& p : m.parameters())
    expected.emplace_back(p.grad.data<float>(), p.grad.data<float>() + p.grad.numel());
  m.zero_grad();

  struct Recorder final : GradientListener {
    std::span<const Parameter> params;
    std::vector<std::vector<float>> seen;
    std::vector<int> times;
    void gradients_ready(std::size_t first, std::size_t count) override {
      for (std::size_t i = first; i < first + count; ++i) {
        ++times[i];
        seen[i].assign(params[i].grad.data<float>(),
                       params[i].grad.data<float>() + params[i].grad.numel());
      }
    }
  } recorder;
  recorder.params = m.parameters();
  recorder.seen.resize(m.parameters().size());
  recorder.times.assign(m.parameters().size(), 0);
  m.forward(x, Mode::train);
  m.backward(*loss, y, &recorder);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(m.parameters()[i].name);
    CHECK(recorder.times[i] == 1);
    CHECK(recorder.seen[i] == expected[i]);
  }
}

TEST_CASE("one shared workspace is the largest layer's need, and training through it is exact") {
  // Layers of different sizes take turns in one buffer; the gradients must be the same, bit for
  // bit, as with a workspace per layer (i2c then recomputes the columns forward left behind).
  const ModelSpec spec = parse_model_spec(json::parse(R"({"name": "three_convs", "layers": [
      {"type": "conv2d", "filters": 8, "kernel": 3, "padding": 1}, {"type": "relu"},
      {"type": "conv2d", "filters": 16, "kernel": 3, "padding": 1}, {"type": "maxpool2d"},
      {"type": "conv2d", "filters": 12, "kernel": 3, "padding": 1}, {"type": "flatten"},
      {"type": "fc", "units": 10}, {"type": "softmax"}]})"),
                                          "test");
  Tensor y = Tensor::zeros(Shape{4, 10}, DType::float32);
  for (int r = 0; r < 4; ++r) y.data<float>()[r * 10 + r] = 1;
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  for (Layout layout : {Layout::nhwc, Layout::nchw})
    for (const char* algorithm : {"i2c", "implicit_gemm", "winograd", "direct"}) {
      CAPTURE(algorithm);
      CAPTURE(to_string(layout));
      const Shape sample = layout == Layout::nhwc ? Shape{12, 12, 3} : Shape{3, 12, 12};
      Tensor x = Tensor::empty(sample.with_batch(4), DType::float32, layout);
      for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = float((i * 37) % 101) / 101;
      std::vector<std::vector<float>> grads[2];
      for (bool shared : {true, false}) {
        ModelOptions o;
        o.max_batch = 4;
        o.layout = layout;
        o.conv_algorithm = algorithm;
        o.shared_workspace = shared;
        Model m(spec, o, sample, test::plugins());
        std::size_t largest = 0, sum = 0;
        for (std::size_t i = 0; i < m.num_layers(); ++i) {
          largest = std::max(largest, m.layer(i).workspace_bytes());
          sum += m.layer(i).workspace_bytes();
        }
        CHECK(m.shared_workspace_bytes() == (shared ? largest : 0));
        CHECK(largest < sum);
        if (shared) CHECK(m.summary().find("Workspace: ") != std::string::npos);
        for (int step = 0; step < 2;
             ++step) {  // the second step finds the buffer as the first left it
          m.zero_grad();
          m.forward(x, Mode::train);
          m.backward(*loss, y);
        }
        for (const auto& p : m.parameters())
          grads[shared].emplace_back(p.grad.data<float>(), p.grad.data<float>() + p.grad.numel());
      }
      CHECK(grads[0] == grads[1]);
    }
}

TEST_CASE("profiling times every layer, the layers inside blocks by kind") {
  const ModelSpec spec = parse_model_spec(nlohmann::json::parse(R"({"layers": [
      {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1},
      {"type": "add", "paths": [[{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1},
                                 {"type": "relu"}],
                                [{"type": "conv2d", "filters": 4, "kernel": 1}]]},
      {"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]})"),
                                          "profiled.json");
  Model m = build(spec, Shape{6, 6, 2});
  Tensor x = Tensor::zeros(Shape{4, 6, 6, 2}, DType::float32);
  Tensor y = Tensor::zeros(Shape{4, 3}, DType::float32);
  for (int r = 0; r < 4; ++r) y.data<float>()[r * 3 + r % 3] = 1;
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  m.set_profiling(true);
  for (int step = 0; step < 2; ++step) {
    m.forward(x, Mode::train);
    m.backward(*loss, y);
  }
  const std::string t = m.profile_table();
  CAPTURE(t);
  // The model's own table has the add block as one row; the kinds table has its layers.
  CHECK(t.find("| add ") != std::string::npos);
  CHECK(t.find("conv2d (6, 6, 2) w(3, 3, 2, 4)") != std::string::npos);  // the first conv
  CHECK(t.find("conv2d (6, 6, 4) w(3, 3, 4, 4)") != std::string::npos);  // path 0's
  CHECK(t.find("conv2d (6, 6, 4) w(1, 1, 4, 4)") != std::string::npos);  // path 1's
  CHECK(t.find("relu (6, 6, 4)") != std::string::npos);
  const std::string kinds = t.substr(t.find("By kind"));
  CHECK(kinds.find("| add") == std::string::npos);  // the block itself is no kind of its own
  CHECK(kinds.find("| conv2d") != std::string::npos);
  // Each kind ran twice (two steps), forward and backward.
  const auto row = t.substr(t.find("conv2d (6, 6, 4) w(1, 1, 4, 4)"));
  CHECK(row.substr(0, row.find('\n')).find("|     2 |") != std::string::npos);
  m.set_profiling(false);
}

TEST_CASE("the experiment's conv object reaches every convolution, blocks' paths included") {
  // conv.algorithm "direct" for the conv2d on top and the one in the block's first path; the
  // second path's names its own algorithm, which takes its own algorithm_params.
  const ModelSpec spec = parse_model_spec(json::parse(R"({"layers": [
      {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1},
      {"type": "add", "paths": [
          [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1}],
          [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1, "algorithm": "i2c",
            "algorithm_params": {"slab_bytes": 4096}}]]}]})"),
                                          "m.json");
  ModelOptions o;
  o.max_batch = 2;
  o.conv_algorithm = "direct";
  o.conv_params = Params(json{{"algorithm", "direct"}}, "exp.json: conv");
  Model m(spec, o, Shape{6, 6, 3}, test::plugins());
  CHECK(m.layer(0).attributes().find("direct") != std::string::npos);
  const auto paths = m.layer(1).inner_layers();
  REQUIRE(paths.size() == 2);
  CHECK(paths[0].second->attributes().find("direct") != std::string::npos);
  CHECK(paths[1].second->attributes().find("i2c") != std::string::npos);

  // Messages name the key where it was written: the layer's algorithm_params, the experiment's
  // conv object.
  const ModelSpec misspelt = parse_model_spec(json::parse(R"({"layers": [
      {"type": "conv2d", "filters": 4, "kernel": 3, "algorithm": "i2c",
       "algorithm_params": {"slab_byte": 1}}]})"),
                                              "m.json");
  CHECK(test::error_of([&] {
          Model(misspelt, o, Shape{6, 6, 3}, test::plugins());
        })
            .find("m.json: layers[0].algorithm_params.slab_byte: unknown parameter of conv "
                  "'i2c'") != std::string::npos);
  // The run's own conv keys ("workspace") are no algorithm's parameters in a layer's object.
  const ModelSpec with_run_key = parse_model_spec(json::parse(R"({"layers": [
      {"type": "conv2d", "filters": 4, "kernel": 3, "algorithm": "i2c",
       "algorithm_params": {"workspace": "shared"}}]})"),
                                                  "m.json");
  CHECK(test::error_of([&] {
          Model(with_run_key, o, Shape{6, 6, 3}, test::plugins());
        })
            .find("m.json: layers[0].algorithm_params.workspace: unknown parameter of conv "
                  "'i2c'") != std::string::npos);
  o.conv_algorithm = "i2c";
  o.conv_params = Params(json{{"algorithm", "i2c"}, {"slab_byte", 1}}, "exp.json: conv");
  CHECK(test::error_of([&] {
          Model(spec, o, Shape{6, 6, 3}, test::plugins());
        }).find("exp.json: conv.slab_byte: unknown parameter of conv 'i2c'") != std::string::npos);
}

TEST_CASE("what a model asks of its layers' traits: a last softmax, layers that merely reshape") {
  auto model = [](const char* last) {
    return build(parse_model_spec(json::parse(std::string(R"({"layers": [
        {"type": "flatten"}, {"type": "fc", "units": 3}, {"type": ")") +
                                              last + R"("}]})"),
                                  "m.json"),
                 Shape{2, 2, 1});
  };
  Model softmax = model("softmax");
  CHECK(softmax.ends_in_softmax());  // a loss may then give the logits' gradient directly
  CHECK(softmax.reshapes(0));        // flatten: a view of its input, no forward, no backward
  CHECK_FALSE(softmax.reshapes(1));
  CHECK_FALSE(model("log_softmax").ends_in_softmax());
  CHECK_FALSE(model("sigmoid").ends_in_softmax());
}
