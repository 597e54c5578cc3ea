// Fused layers (conv+relu, conv+batchnorm, conv+batchnorm+relu, batchnorm+relu, fc+gelu) against
// the same model unfused: the same weights give the same training steps and the same evaluation
// outputs.
#include <doctest/doctest.h>

#include <cmath>

#include "dtnn/experiment.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// conv, batchnorm, relu; conv, relu; batchnorm, relu inside a residual block; global pooling.
const char* kModel = R"({"layers": [
  {"type": "conv2d", "filters": 6, "kernel": 3, "padding": 1},
  {"type": "batchnorm", "momentum": 0.5},
  {"type": "relu"},
  {"type": "add", "paths": [[{"type": "conv2d", "filters": 6, "kernel": 3, "padding": 1, "use_bias": false},
                             {"type": "batchnorm"},
                             {"type": "conv2d", "filters": 6, "kernel": 1},
                             {"type": "relu"}],
                            [{"type": "batchnorm"}, {"type": "relu"}]]},
  {"type": "conv2d", "filters": 4, "kernel": 3, "stride": 2},
  {"type": "relu"},
  {"type": "avgpool2d", "pool": 0},
  {"type": "flatten"},
  {"type": "fc", "units": 3},
  {"type": "softmax"}]})";

// A sequence's positions through fc and gelu twice (both gelu forms), then classes: 300
// positions of 5 samples are 1,500 rows, six blocks of the fused gelu's 256.
const char* kSequenceModel = R"({"layers": [
  {"type": "fc", "units": 40, "flatten": false},
  {"type": "gelu", "approximate": "tanh"},
  {"type": "fc", "units": 40, "flatten": false},
  {"type": "gelu"},
  {"type": "fc", "units": 3},
  {"type": "softmax"}]})";

Model build(const char* model, const Fusions& fusions, Layout layout, const Shape& input) {
  ModelOptions o;
  o.dtype = DType::float64;
  o.layout = layout;
  o.max_batch = 5;
  o.conv_algorithm = "i2c";
  o.fusions = fusions;
  return Model(parse_model_spec(json::parse(model), "test"), o, input, test::plugins());
}

double max_difference(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(a.data<double>()[i] - b.data<double>()[i]));
  return worst;
}

// The fused model, with the plain one's weights, trains (three SGD steps) and evaluates as the
// plain one does, on 5 samples.
void check_alike(Model& plain, Model& fused, Layout layout) {
  CHECK(fused.num_layers() < plain.num_layers());
  REQUIRE(fused.parameters().size() == plain.parameters().size());
  for (std::size_t i = 0; i < plain.parameters().size(); ++i) {
    CAPTURE(plain.parameters()[i].name);
    Tensor target = fused.parameters()[i].value;
    target.copy_from(plain.parameters()[i].value);
  }
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  Tensor x = Tensor::empty(plain.input_shape().with_batch(5), DType::float64, layout);
  Tensor y = Tensor::zeros(Shape{5, 3}, DType::float64);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = std::sin(0.7 * double(i));
  for (int n = 0; n < 5; ++n) y.data<double>()[n * 3 + n % 3] = 1;
  for (int step = 0; step < 3; ++step) {  // SGD steps, lr 0.1, in both
    const Tensor& a = plain.forward(x, Mode::train);
    const Tensor& b = fused.forward(x, Mode::train);
    CHECK(max_difference(a, b) < 1e-12);
    for (Model* m : {&plain, &fused}) {
      m->zero_grad();
      m->backward(*loss, y);
      for (const auto& p : m->parameters())
        for (std::int64_t i = 0; i < p.value.numel(); ++i)
          p.value.data<double>()[i] -= 0.1 * p.grad.data<double>()[i];
    }
    for (std::size_t i = 0; i < plain.parameters().size(); ++i)
      CHECK(max_difference(plain.parameters()[i].grad, fused.parameters()[i].grad) < 1e-10);
  }
  // Evaluation: running statistics (folded into the filters where conv+batchnorm is fused).
  CHECK(max_difference(plain.forward(x, Mode::eval), fused.forward(x, Mode::eval)) < 1e-12);
}

}  // namespace

TEST_CASE("fused and unfused layers train and evaluate alike") {
  const Fusions all = {"conv_relu", "conv_batchnorm", "conv_batchnorm_relu", "batchnorm_relu"};
  const Fusions conv_bn_only = {"conv_batchnorm"};
  for (Layout layout : {Layout::nhwc, Layout::nchw})
    for (const Fusions& fusions : {all, conv_bn_only}) {
      CAPTURE(to_string(layout));
      CAPTURE(fusions.size());
      const Shape input = layout == Layout::nhwc ? Shape{7, 6, 2} : Shape{2, 7, 6};
      Model plain = build(kModel, Fusions{}, layout, input);
      Model fused = build(kModel, fusions, layout, input);
      check_alike(plain, fused, layout);
    }
}

TEST_CASE("fc with a fused gelu trains and evaluates as fc and gelu, over blocks of rows") {
  Model plain = build(kSequenceModel, Fusions{}, Layout::nhwc, Shape{300, 4});
  Model fused = build(kSequenceModel, Fusions{"fc_gelu"}, Layout::nhwc, Shape{300, 4});
  CHECK(fused.num_layers() == plain.num_layers() - 2);
  check_alike(plain, fused, Layout::nhwc);
}

TEST_CASE("fuse_layers rewrites the runs it is allowed to and leaves the rest") {
  auto specs = parse_layer_list(json::parse(R"([
    {"type": "conv2d", "filters": 2}, {"type": "batchnorm"}, {"type": "relu"},
    {"type": "conv2d", "filters": 2}, {"type": "relu"},
    {"type": "batchnorm"}, {"type": "relu"}, {"type": "relu"}])"),
                                "test");
  const auto original = specs;
  fuse_layers(specs, {"conv_relu", "batchnorm_relu"}, test::plugins(), Device::cpu);  // not conv+bn
  std::vector<std::string> types;
  for (const auto& s : specs) types.push_back(s.type + (s.params.has("activation") ? "+relu" : ""));
  CHECK(types == std::vector<std::string>{"conv2d", "batchnorm+relu", "conv2d+relu",
                                          "batchnorm+relu", "relu"});
  // The longest run a plugin declares comes first; an absorbed layer's parameters go where the
  // plugin's default is not a string (conv2d's "batchnorm": null), its type where it is.
  specs = original;
  fuse_layers(specs, {"conv_batchnorm_relu", "conv_batchnorm"}, test::plugins(), Device::cpu);
  REQUIRE(specs.size() == 6);
  CHECK(specs[0].params.json()["activation"] == "relu");
  CHECK(specs[0].params.json()["batchnorm"] == json::object());
  CHECK(specs[1].type == "conv2d");
  // A layer written fused is neither fused again nor absorbed.
  specs = parse_layer_list(json::parse(R"([{"type": "conv2d", "filters": 2, "activation": "relu"},
    {"type": "relu"}, {"type": "conv2d", "filters": 2}, {"type": "batchnorm", "activation": "relu"}])"),
                           "test");
  fuse_layers(specs, {"conv_relu", "conv_batchnorm", "batchnorm_relu"}, test::plugins(),
              Device::cpu);
  CHECK(specs.size() == 4);
  // The options the installed layers declare.
  CHECK(fusion_options(test::plugins(), Device::cpu) ==
        std::set<std::string>{"batchnorm_relu", "conv_batchnorm", "conv_batchnorm_relu",
                              "conv_relu", "fc_gelu"});
}

TEST_CASE("a fusion option no layer plugin declares is refused by name") {
  json c = {{"model", "simplecnn"},
            {"dataset",
             {{"name", "synthetic"},
              {"input_shape", {28, 28, 1}},
              {"classes", 10},
              {"train_samples", 8},
              {"test_samples", 8}}},
            {"fusion", {{"conv_rleu", true}}}};
  CHECK(test::error_of([&] { Experiment(make_experiment(c, {}, "f.json"), test::plugins()); }) ==
        "config: fusion.conv_rleu: no layer plugin declares this fusion (did you mean "
        "'conv_relu'?); declared: batchnorm_relu, conv_batchnorm, conv_batchnorm_relu, conv_relu, "
        "fc_gelu");
  c["fusion"] = {{"conv_relu", 1}};
  CHECK(test::error_of([&] { Experiment(make_experiment(c, {}, "f.json"), test::plugins()); }) ==
        "config: fusion.conv_relu: expected true or false, got 1");
}
