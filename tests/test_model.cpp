#include <doctest/doctest.h>

#include "dtnn/config.hpp"
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

TEST_CASE("shipped models have PyDTNN's parameter counts") {
  Model cnn = build(load_model_spec(resolve_model_path("simplecnn", "")), Shape{28, 28, 1});
  CHECK(cnn.parameter_count() == 149210);
  CHECK(cnn.output_shape() == Shape{10});
  CHECK(cnn.summary().find("Total parameters: 149,210 (596,840 bytes") != std::string::npos);
  Model mlp = build(load_model_spec(resolve_model_path("simplemlp", "")), Shape{28, 28, 1});
  CHECK(mlp.parameter_count() == 669706);
  Model nchw =
      build(load_model_spec(resolve_model_path("simplecnn", "")), Shape{1, 28, 28}, Layout::nchw);
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
        "biases_initializer, units, use_bias, weights_initializer");
  ModelSpec pool =
      parse_model_spec(json::parse(R"({"layers": [{"type": "maxpool2d"}]})"), "m.json");
  CHECK(test::error_of([&] { build(pool, Shape{12}); }) ==
        "m.json: layers[0] (maxpool2d on input (12,)): expects image input (H, W, C), got (12,)");
  ModelSpec shaped = parse_model_spec(
      json::parse(R"({"input_shape": [32, 32, 3], "layers": [{"type": "relu"}]})"), "m.json");
  CHECK(test::error_of([&] {
          build(shaped, Shape{28, 28, 1});
        }).find("input_shape (32, 32, 3) does not match the dataset's samples (28, 28, 1)") !=
        std::string::npos);
}
