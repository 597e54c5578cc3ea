// Layers by hand: forward on tiny inputs where the answer is easy to write down, and what each
// layer promises beyond the contracts every layer keeps (gradients, accumulation, partial
// batches: tests/test_conformance.cpp runs those over every layer plugin at its declared cases).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "dtnn/conv_options.hpp"
#include "dtnn/model.hpp"
#include "dtnn/testing/gradient_check.hpp"
#include "dtnn/testing/guarded.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

std::shared_ptr<Layer> make(const std::string& type, const json& params, const Shape& input,
                            Layout layout, std::int64_t batch,
                            const std::string& conv = "reference") {
  auto layer = test::plugins().create_as<Layer>("layer", type, Params(params, "test: " + type));
  LayerBuildContext ctx;
  ctx.input_shape = input;
  ctx.dtype = DType::float64;
  ctx.layout = layout;
  ctx.max_batch = batch;
  ctx.seed = 11;
  ctx.registry = &test::plugins();
  ctx.extensions.set(std::make_shared<ConvOptions>(ConvOptions{conv, Params()}));
  layer->build(ctx);
  return layer;
}

}  // namespace

TEST_CASE("depthwise_conv2d: each channel with its own filter, by hand") {
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    // 2 channels of 3x3 input, 2x2 kernel: channel c holds 1..9 times (c + 1); w = 1 for
    // channel 0, [1, 0; 0, -1] for channel 1; biases 0.
    const Shape input = layout == Layout::nhwc ? Shape{3, 3, 2} : Shape{2, 3, 3};
    auto layer = make("depthwise_conv2d", {{"kernel", 2}, {"biases_initializer", "zeros"}}, input,
                      layout, 1);
    Tensor w = layer->parameters()[0].value;
    auto widx = [&](int ky, int kx, int c) {
      return layout == Layout::nhwc ? (ky * 2 + kx) * 2 + c : (c * 2 + ky) * 2 + kx;
    };
    for (int ky = 0; ky < 2; ++ky)
      for (int kx = 0; kx < 2; ++kx) {
        w.data<double>()[widx(ky, kx, 0)] = 1;
        w.data<double>()[widx(ky, kx, 1)] = ky == kx ? (ky ? -1 : 1) : 0;
      }
    Tensor x = Tensor::empty(input.with_batch(1), DType::float64, layout);
    auto xidx = [&](int y, int xx, int c, int side) {
      return layout == Layout::nhwc ? (y * side + xx) * 2 + c : (c * side + y) * side + xx;
    };
    for (int y = 0; y < 3; ++y)
      for (int xx = 0; xx < 3; ++xx)
        for (int c = 0; c < 2; ++c)
          x.data<double>()[xidx(y, xx, c, 3)] = (y * 3 + xx + 1) * (c + 1);
    Tensor out = Tensor::empty(layer->output_shape().with_batch(1), DType::float64, layout);
    layer->forward(x, out, Mode::train);
    // Channel 0: sums of 2x2 windows of 1..9: 12 16 / 24 28. Channel 1: 2 * (a - d) = -8.
    CHECK(out.data<double>()[xidx(0, 0, 0, 2)] == 12);
    CHECK(out.data<double>()[xidx(1, 1, 0, 2)] == 28);
    CHECK(out.data<double>()[xidx(0, 1, 1, 2)] == -8);
    CHECK(out.data<double>()[xidx(1, 0, 1, 2)] == -8);
  }
}

TEST_CASE("pointwise_conv2d is a 1x1 convolution, its kernel cannot be set") {
  // An alias its plugin declares (traits): read as a conv2d with the window fixed.
  auto specs = parse_layer_list(json::parse(R"([{"type": "pointwise_conv2d", "filters": 8}])"),
                                "m.json: layers");
  resolve_aliases(specs, test::plugins());
  REQUIRE(specs.size() == 1);
  CHECK(specs[0].type == "conv2d");
  CHECK(specs[0].params.get_ints("kernel") == std::vector<std::int64_t>{1});
  CHECK(specs[0].params.get_ints("stride") == std::vector<std::int64_t>{1});
  CHECK(test::error_of([] {
          auto bad = parse_layer_list(
              json::parse(R"([{"type": "pointwise_conv2d", "filters": 8, "kernel": 3}])"),
              "m.json: layers");
          resolve_aliases(bad, test::plugins());
        }).find("m.json: layers[0]: pointwise_conv2d: 'kernel' is fixed") != std::string::npos);
  // In a model, blocks' paths included.
  ModelOptions o;
  const json model = json::parse(R"({"layers": [{"type": "pointwise_conv2d", "filters": 3},
      {"type": "add", "paths": [[{"type": "pointwise_conv2d", "filters": 3}], []]}]})");
  Model m(parse_model_spec(model, "m.json"), o, Shape{4, 4, 2}, test::plugins());
  CHECK(m.layer(0).type() == "conv2d");
  CHECK(m.output_shape() == Shape{4, 4, 3});
}

TEST_CASE("batchnorm: training normalises each channel, eval uses the running statistics") {
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    // 4 samples of 1x2 pixels with 2 channels; channel 0 holds 1..8, channel 1 holds 10 * that.
    const Shape input = layout == Layout::nhwc ? Shape{1, 2, 2} : Shape{2, 1, 2};
    auto layer = make("batchnorm", {{"momentum", 0.5}, {"epsilon", 1e-12}}, input, layout, 4);
    Tensor x = Tensor::empty(input.with_batch(4), DType::float64, layout);
    Tensor y = Tensor::empty(input.with_batch(4), DType::float64, layout);
    auto at = [&](std::int64_t n, std::int64_t p, std::int64_t c) {
      return layout == Layout::nhwc ? (n * 2 + p) * 2 + c : (n * 2 + c) * 2 + p;
    };
    for (std::int64_t n = 0; n < 4; ++n)
      for (std::int64_t p = 0; p < 2; ++p)
        for (std::int64_t c = 0; c < 2; ++c)
          x.data<double>()[at(n, p, c)] = double(n * 2 + p + 1) * (c ? 10.0 : 1.0);
    layer->forward(x, y, Mode::train);
    // Values 1..8: mean 4.5, biased variance 5.25.
    for (std::int64_t n = 0; n < 4; ++n)
      for (std::int64_t p = 0; p < 2; ++p)
        for (std::int64_t c = 0; c < 2; ++c)
          CHECK(y.data<double>()[at(n, p, c)] ==
                doctest::Approx((double(n * 2 + p + 1) - 4.5) / std::sqrt(5.25)).epsilon(1e-9));
    // Running statistics moved half way from (0, 1): mean 2.25 (22.5), variance 3.125 (263).
    const auto state = layer->state();
    REQUIRE(state.size() == 2);
    CHECK(state[0].data<double>()[0] == doctest::Approx(2.25));
    CHECK(state[0].data<double>()[1] == doctest::Approx(22.5));
    CHECK(state[1].data<double>()[0] == doctest::Approx(3.125));
    CHECK(state[1].data<double>()[1] == doctest::Approx(263.0));
    layer->forward(x, y, Mode::eval);
    CHECK(y.data<double>()[at(3, 1, 0)] == doctest::Approx((8.0 - 2.25) / std::sqrt(3.125)));
    CHECK(y.data<double>()[at(0, 0, 1)] == doctest::Approx((10.0 - 22.5) / std::sqrt(263.0)));
  }
}

TEST_CASE("batchnorm: NHWC in chunks of the channels' pattern gives NCHW's results") {
  // NHWC layers whose channels repeat with a period of 16, 32, 48 or 64 values run flat vector
  // loops over that pattern (plugins/layers/batchnorm/channel_pattern.hpp); NCHW runs plane by
  // plane. 5 samples of 3x3 pixels: 45 rows, so runs and chunks end inside the batch.
  for (std::int64_t c : {3, 16, 24, 32, 48, 64, 80})
    for (const char* activation : {"", "relu"}) {
      CAPTURE(c);
      CAPTURE(activation);
      const std::int64_t n = 5, pixels = 9;
      const json params = {
          {"momentum", 0.5}, {"gamma", 1.5}, {"beta", 0.25}, {"activation", activation}};
      auto nhwc = make("batchnorm", params, Shape{3, 3, c}, Layout::nhwc, n);
      auto nchw = make("batchnorm", params, Shape{c, 3, 3}, Layout::nchw, n);
      auto tensor = [&](Layout layout) {
        return Tensor::empty(layout == Layout::nhwc ? Shape{n, 3, 3, c} : Shape{n, c, 3, 3},
                             DType::float64, layout);
      };
      Tensor x1 = tensor(Layout::nhwc), y1 = tensor(Layout::nhwc), dy1 = tensor(Layout::nhwc),
             dx1 = tensor(Layout::nhwc);
      Tensor x2 = tensor(Layout::nchw), y2 = tensor(Layout::nchw), dy2 = tensor(Layout::nchw),
             dx2 = tensor(Layout::nchw);
      auto nchw_at = [&](std::int64_t i) {  // NHWC flat index i's place in NCHW
        const std::int64_t ch = i % c, p = i / c % pixels, s = i / (c * pixels);
        return (s * c + ch) * pixels + p;
      };
      for (std::int64_t i = 0; i < n * pixels * c; ++i) {
        const double v = std::sin(0.37 * double(i)) * (1.0 + double(i % c)) + 0.1 * double(i % 7);
        x1.data<double>()[i] = x2.data<double>()[nchw_at(i)] = v;
        dy1.data<double>()[i] = dy2.data<double>()[nchw_at(i)] = std::cos(0.91 * double(i));
      }
      for (int step = 0; step < 2; ++step) {  // the second with running statistics moved
        nhwc->forward(x1, y1, Mode::train);
        nchw->forward(x2, y2, Mode::train);
        nhwc->backward(x1, y1, dy1, &dx1);
        nchw->backward(x2, y2, dy2, &dx2);
      }
      for (std::int64_t i = 0; i < n * pixels * c; ++i) {
        REQUIRE(y1.data<double>()[i] == doctest::Approx(y2.data<double>()[nchw_at(i)]));
        REQUIRE(dx1.data<double>()[i] == doctest::Approx(dx2.data<double>()[nchw_at(i)]));
      }
      const auto p1 = nhwc->parameters(), p2 = nchw->parameters();
      REQUIRE(p1.size() == 2);
      for (std::size_t k = 0; k < 2; ++k)
        for (std::int64_t ch = 0; ch < c; ++ch)
          REQUIRE(p1[k].grad.data<double>()[ch] == doctest::Approx(p2[k].grad.data<double>()[ch]));
    }
}

TEST_CASE("add and concat blocks: forward by hand, and their parameters are the paths'") {
  const Shape input{1, 2, 2};  // NHWC: 2 pixels, 2 channels
  Tensor x = Tensor::empty(input.with_batch(1), DType::float64);
  for (int i = 0; i < 4; ++i) x.data<double>()[i] = i - 1.5;  // -1.5 -0.5 0.5 1.5
  // add: relu(x) + x
  auto add =
      make("add", {{"paths", {{{{"type", "relu"}}}, json::array()}}}, input, Layout::nhwc, 1);
  CHECK(add->output_shape() == input);
  Tensor y = Tensor::empty(input.with_batch(1), DType::float64);
  add->forward(x, y, Mode::train);
  CHECK(y.data<double>()[0] == -1.5);
  CHECK(y.data<double>()[3] == 3.0);
  // concat: [x, relu(x)] along channels: each pixel's 2 channels, then their relu.
  auto concat =
      make("concat", {{"paths", {json::array(), {{{"type", "relu"}}}}}}, input, Layout::nhwc, 1);
  REQUIRE(concat->output_shape() == Shape{1, 2, 4});
  Tensor z = Tensor::empty(Shape{1, 1, 2, 4}, DType::float64);
  concat->forward(x, z, Mode::train);
  const std::vector<double> expected{-1.5, -0.5, 0, 0, 0.5, 1.5, 0.5, 1.5};
  for (int i = 0; i < 8; ++i) CHECK(z.data<double>()[i] == expected[static_cast<std::size_t>(i)]);
  // Parameters of layers inside paths are the block's, named by path and position.
  auto res = make("add",
                  {{"paths",
                    {{{{"type", "conv2d"}, {"filters", 2}, {"kernel", 1}}, {{"type", "batchnorm"}}},
                     json::array()}}},
                  input, Layout::nhwc, 1);
  std::vector<std::string> names;
  for (const auto& p : res->parameters()) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"path0.1.conv2d.weights", "path0.1.conv2d.biases",
                                          "path0.2.batchnorm.gamma", "path0.2.batchnorm.beta"});
  CHECK(res->state().size() == 2);  // the batchnorm's running statistics
}

TEST_CASE("blocks refuse paths that cannot be merged, naming them") {
  const json conv = {{"type", "conv2d"}, {"filters", 3}, {"kernel", 1}};
  CHECK_THROWS_WITH(
      make("add", {{"paths", {{conv}, json::array()}}}, Shape{2, 2, 2}, Layout::nhwc, 1),
      doctest::Contains("path 1 gives (2, 2, 2) but path 0 gives (2, 2, 3)"));
  const json pool = {{"type", "maxpool2d"}, {"pool", 2}};
  CHECK_THROWS_WITH(
      make("concat", {{"paths", {{pool}, json::array()}}}, Shape{2, 2, 2}, Layout::nhwc, 1),
      doctest::Contains("all but channels must agree"));
  CHECK_THROWS_WITH(make("add", {{"paths", json::array()}}, Shape{2, 2, 2}, Layout::nhwc, 1),
                    doctest::Contains("paths"));
}

TEST_CASE("forward by hand: relu, sigmoid, tanh, softmax, maxpool2d") {
  Tensor x = Tensor::empty(Shape{1, 4}, DType::float64),
         y = Tensor::empty(Shape{1, 4}, DType::float64);
  double v[] = {-2.0, 0.0, 1.0, 3.0};
  for (int i = 0; i < 4; ++i) x.data<double>()[i] = v[i];
  make("relu", json::object(), Shape{4}, Layout::nhwc, 1)->forward(x, y, Mode::eval);
  CHECK(y.data<double>()[0] == 0.0);
  CHECK(y.data<double>()[3] == 3.0);
  make("sigmoid", json::object(), Shape{4}, Layout::nhwc, 1)->forward(x, y, Mode::eval);
  CHECK(y.data<double>()[1] == doctest::Approx(0.5));
  CHECK(y.data<double>()[2] == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))));
  make("tanh", json::object(), Shape{4}, Layout::nhwc, 1)->forward(x, y, Mode::eval);
  CHECK(y.data<double>()[3] == doctest::Approx(std::tanh(3.0)));
  make("softmax", json::object(), Shape{4}, Layout::nhwc, 1)->forward(x, y, Mode::eval);
  double z = std::exp(-2.0) + 1 + std::exp(1.0) + std::exp(3.0);
  CHECK(y.data<double>()[3] == doctest::Approx(std::exp(3.0) / z));
  // sigmoid does not overflow for large |x|
  x.data<double>()[0] = -1000.0;
  make("sigmoid", json::object(), Shape{4}, Layout::nhwc, 1)->forward(x, y, Mode::eval);
  CHECK(y.data<double>()[0] == 0.0);

  Tensor img = Tensor::empty(Shape{1, 2, 2, 1}, DType::float64),
         out = Tensor::empty(Shape{1, 1, 1, 1}, DType::float64);
  double px[] = {1.0, 5.0, -3.0, 2.0};
  for (int i = 0; i < 4; ++i) img.data<double>()[i] = px[i];
  make("maxpool2d", {{"pool", 2}}, Shape{2, 2, 1}, Layout::nhwc, 1)->forward(img, out, Mode::eval);
  CHECK(out.data<double>()[0] == 5.0);
  make("avgpool2d", {{"pool", 2}}, Shape{2, 2, 1}, Layout::nhwc, 1)->forward(img, out, Mode::eval);
  CHECK(out.data<double>()[0] == doctest::Approx(1.25));
}

TEST_CASE("maxpool2d: the float32 vector path agrees with the float64 path") {
  // Whole float vectors of channels (8, 16, 24); windows that tile the image apart (stride =
  // pool) with rows and columns past the last window, overlapping and padded ones.
  const std::vector<std::pair<json, Shape>> cases = {
      {json{{"pool", 2}}, Shape{7, 6, 16}},
      {json{{"pool", 2}}, Shape{6, 9, 8}},
      {json{{"pool", {3, 2}}}, Shape{8, 7, 24}},
      {json{{"pool", 3}, {"stride", 2}}, Shape{7, 7, 8}},
      {json{{"pool", 3}, {"stride", 2}, {"padding", 1}}, Shape{7, 6, 16}}};
  for (const auto& [params, in] : cases) {
    CAPTURE(params.dump());
    auto make_t = [&](DType dt) {
      auto layer = test::plugins().create_as<Layer>("layer", "maxpool2d", Params(params, "test"));
      LayerBuildContext ctx;
      ctx.input_shape = in;
      ctx.dtype = dt;
      ctx.max_batch = 3;
      ctx.registry = &test::plugins();
      layer->build(ctx);
      return layer;
    };
    auto l32 = make_t(DType::float32), l64 = make_t(DType::float64);
    Tensor x32 = Tensor::empty(in.with_batch(3), DType::float32),
           x64 = Tensor::empty(in.with_batch(3), DType::float64);
    testing::fill_uniform(x64, 5);
    for (std::int64_t i = 0; i < x64.numel(); ++i)
      x32.data<float>()[i] = static_cast<float>(x64.data<double>()[i]);
    for (std::int64_t i = 0; i < x64.numel(); ++i)
      x64.data<double>()[i] = x32.data<float>()[i];  // same values
    Shape out = l32->output_shape().with_batch(3);
    Tensor y32 = Tensor::empty(out, DType::float32), y64 = Tensor::empty(out, DType::float64);
    Tensor d32 = Tensor::empty(out, DType::float32), d64 = Tensor::empty(out, DType::float64);
    testing::fill_uniform(d64, 6);
    for (std::int64_t i = 0; i < d64.numel(); ++i)
      d32.data<float>()[i] = static_cast<float>(d64.data<double>()[i]);
    Tensor dx32 = Tensor::empty(x32.shape(), DType::float32),
           dx64 = Tensor::empty(x64.shape(), DType::float64);
    for (std::int64_t i = 0; i < dx32.numel(); ++i)  // backward writes every input's gradient
      dx32.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
    l32->forward(x32, y32, Mode::train);
    l64->forward(x64, y64, Mode::train);
    l32->backward(x32, y32, d32, &dx32);
    l64->backward(x64, y64, d64, &dx64);
    CHECK(testing::relative_error(y32, y64) < 1e-6);
    CHECK(testing::relative_error(dx32, dx64) < 1e-6);
  }
}

TEST_CASE("dropout: a new mask every training step, the same one within a step") {
  auto layer = make("dropout", {{"rate", 0.5}}, Shape{64}, Layout::nhwc, 1);
  Tensor x = Tensor::empty(Shape{1, 64}, DType::float64),
         y1 = Tensor::empty(x.shape(), DType::float64);
  Tensor y2 = Tensor::empty(x.shape(), DType::float64),
         y3 = Tensor::empty(x.shape(), DType::float64);
  testing::fill_uniform(x, 1, 0.5, 1.5);
  layer->forward(x, y1, Mode::train);
  layer->forward(x, y2, Mode::train);  // same step: same mask
  CHECK(testing::relative_error(y1, y2) == 0.0);
  layer->backward(x, y2, y2, nullptr);
  layer->forward(x, y3, Mode::train);  // next step: another mask
  CHECK(testing::relative_error(y1, y3) > 0.0);
}

TEST_CASE("dropout: drops about 'rate', scales the rest, and backward uses the same mask") {
  const double rate = 0.25;
  auto layer = make("dropout", {{"rate", rate}}, Shape{1000}, Layout::nhwc, 4);
  Tensor x = Tensor::empty(Shape{4, 1000}, DType::float64),
         y = Tensor::empty(x.shape(), DType::float64);
  Tensor dy = Tensor::empty(x.shape(), DType::float64),
         dx = Tensor::empty(x.shape(), DType::float64);
  testing::fill_uniform(x, 1, 0.5, 1.5);
  testing::fill_uniform(dy, 2);
  layer->forward(x, y, Mode::train);
  layer->backward(x, y, dy, &dx);
  int dropped = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double xi = x.data<double>()[i], yi = y.data<double>()[i];
    if (yi == 0.0) {
      ++dropped;
      CHECK(dx.data<double>()[i] == 0.0);
    } else {
      CHECK(yi == doctest::Approx(xi / (1 - rate)));
      CHECK(dx.data<double>()[i] == doctest::Approx(dy.data<double>()[i] / (1 - rate)));
    }
  }
  CHECK(dropped > 900);  // expected 1000 of 4000
  CHECK(dropped < 1100);
  layer->forward(x, y, Mode::eval);
  CHECK(testing::relative_error(y, x) == 0.0);
}

TEST_CASE("conv2d falls back when its algorithm does not support the layer") {
  // winograd computes 2x2, 3x3 and 5x5 filters only: with 7x7 the layer must run i2c, and still
  // be right.
  auto layer =
      make("conv2d", {{"filters", 2}, {"kernel", 7}}, Shape{2, 8, 8}, Layout::nchw, 1, "winograd");
  CHECK(layer->attributes().find(" i2c") != std::string::npos);
  auto r = testing::check_gradients(*layer, Shape{2, 8, 8}, 1, Layout::nchw);
  CHECK(r.input_error < 1e-7);
  CHECK(r.parameter_error < 1e-7);
}

TEST_CASE("bad layer parameters are named") {
  CHECK(test::error_of([] {
          make("conv2d", {{"filters", 0}}, Shape{5, 5, 1}, Layout::nhwc, 1);
        }) == "test: conv2d.filters: expected a positive number of filters, got 0");
  CHECK(test::error_of([] {
          make("conv2d", {{"filters", 2}, {"kernel", 7}}, Shape{5, 5, 1}, Layout::nhwc, 1);
        }).find("kernel larger than the padded input") != std::string::npos);
  CHECK(test::error_of([] {
          make("fc", {{"units", 3}, {"weights_initializer", "glorot"}}, Shape{5}, Layout::nhwc, 1);
        }).find("test: fc.weights_initializer: unknown initializer 'glorot'") == 0);
  CHECK(test::error_of([] {
          make("dropout", {{"rate", 1.0}}, Shape{5}, Layout::nhwc, 1);
        }) == "test: dropout.rate: expected a number in [0, 1), got 1.0");
}

TEST_CASE("initialisers: each draws from its distribution with the layer's fan-in and fan-out") {
  // conv2d 8 -> 16 channels, 3x3: fan_in = 8 * 9 = 72, fan_out = 16 * 9 = 144 in either layout
  // (Keras's and PyDTNN's convention); fc 40 -> 30: fan_in 40, fan_out 30.
  struct Case {
    const char* name;
    bool normal;
    double scale;  // uniform: the limit; normal: the standard deviation
  };
  auto cases = [](double fi, double fo) {
    return std::vector<Case>{{"glorot_uniform", false, std::sqrt(6 / (fi + fo))},
                             {"glorot_normal", true, std::sqrt(2 / (fi + fo))},
                             {"he_uniform", false, std::sqrt(6 / fi)},
                             {"he_normal", true, std::sqrt(2 / fi)},
                             {"lecun_uniform", false, std::sqrt(3 / fi)},
                             {"lecun_normal", true, std::sqrt(1 / fi)}};
  };
  auto check = [](const Tensor& w, const Case& c) {
    CAPTURE(c.name);
    double sum = 0, sum2 = 0, biggest = 0;
    for (std::int64_t i = 0; i < w.numel(); ++i) {
      const double v = w.data<double>()[i];
      sum += v;
      sum2 += v * v;
      biggest = std::max(biggest, std::abs(v));
    }
    const double n = double(w.numel()), std = std::sqrt(sum2 / n - (sum / n) * (sum / n));
    CHECK(std::abs(sum / n) < 0.1 * c.scale);
    if (c.normal) {
      CHECK(std == doctest::Approx(c.scale).epsilon(0.1));
    } else {
      CHECK(biggest <= c.scale);
      CHECK(biggest > 0.95 * c.scale);
      CHECK(std == doctest::Approx(c.scale / std::sqrt(3.0)).epsilon(0.1));
    }
  };
  for (Layout layout : {Layout::nhwc, Layout::nchw})
    for (const Case& c : cases(72, 144)) {
      CAPTURE(to_string(layout));
      auto conv = make("conv2d", {{"filters", 16}, {"kernel", 3}, {"weights_initializer", c.name}},
                       layout == Layout::nhwc ? Shape{5, 5, 8} : Shape{8, 5, 5}, layout, 1);
      check(conv->parameters()[0].value, c);
    }
  for (const Case& c : cases(40, 30)) {
    auto fc =
        make("fc", {{"units", 30}, {"weights_initializer", c.name}}, Shape{40}, Layout::nhwc, 1);
    check(fc->parameters()[0].value, c);
  }
  auto ones =
      make("fc", {{"units", 3}, {"weights_initializer", "zeros"}, {"biases_initializer", "ones"}},
           Shape{4}, Layout::nhwc, 1);
  for (int i = 0; i < 12; ++i) CHECK(ones->parameters()[0].value.data<double>()[i] == 0.0);
  for (int i = 0; i < 3; ++i) CHECK(ones->parameters()[1].value.data<double>()[i] == 1.0);
  CHECK(test::error_of([] {
          make("fc", {{"units", 3}, {"weights_initializer", "glorot"}}, Shape{4}, Layout::nhwc, 1);
        }).find("glorot_uniform") != std::string::npos);
}

TEST_CASE("relu6, log_sigmoid, identity, arctanh and log: values by hand") {
  auto value = [](const std::string& type, double x) {
    auto layer = make(type, json::object(), Shape{1, 1, 1}, Layout::nhwc, 1);
    Tensor in = Tensor::empty(Shape{1, 1, 1, 1}, DType::float64);
    Tensor out = Tensor::empty(Shape{1, 1, 1, 1}, DType::float64);
    in.data<double>()[0] = x;
    layer->forward(in, out, Mode::eval);
    return out.data<double>()[0];
  };
  CHECK(value("relu6", -1.5) == 0.0);
  CHECK(value("relu6", 2.5) == 2.5);
  CHECK(value("relu6", 7.0) == 6.0);
  CHECK(value("log_sigmoid", 0.0) == doctest::Approx(-std::log(2.0)));
  CHECK(value("log_sigmoid", -800.0) == doctest::Approx(-800.0));  // no overflow
  CHECK(value("log_sigmoid", 40.0) == doctest::Approx(-std::exp(-40.0)).epsilon(1e-6));
  CHECK(value("identity", -3.25) == -3.25);
  CHECK(value("arctanh", 0.5) == doctest::Approx(0.5 * std::log(3.0)));
  CHECK(value("arctanh", -0.5) == doctest::Approx(-0.5 * std::log(3.0)));
  CHECK(value("log", std::exp(1.5)) == doctest::Approx(1.5));
}

TEST_CASE("adaptive_avgpool2d: windows of PyTorch's adaptive pooling, by hand") {
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    // One column of 5 rows, 1..5, into 3 rows: rows [0, 2), [1, 4), [3, 5) -> 1.5, 3, 4.5.
    const Shape input = layout == Layout::nhwc ? Shape{5, 1, 1} : Shape{1, 5, 1};
    auto layer =
        make("adaptive_avgpool2d", {{"output_height", 3}, {"output_width", 1}}, input, layout, 1);
    Tensor x = Tensor::empty(input.with_batch(1), DType::float64, layout);
    for (int i = 0; i < 5; ++i) x.data<double>()[i] = i + 1;
    Tensor y = Tensor::empty(layer->output_shape().with_batch(1), DType::float64, layout);
    layer->forward(x, y, Mode::eval);
    CHECK(y.data<double>()[0] == doctest::Approx(1.5));
    CHECK(y.data<double>()[1] == doctest::Approx(3.0));
    CHECK(y.data<double>()[2] == doctest::Approx(4.5));
  }
}
