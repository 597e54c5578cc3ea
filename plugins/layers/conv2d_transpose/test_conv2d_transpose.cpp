// conv2d_transpose against its definition: every input pixel scatters the filter, times its
// value, into the output at stride apart (PyTorch's ConvTranspose2d), in both layouts.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "dtnn/conv_options.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/testing/guarded.hpp"
#include "test_support.hpp"

using namespace dtnn;

TEST_CASE("conv2d_transpose scatters each input pixel's filter at stride apart") {
  const std::int64_t n = 2, h = 3, w = 2, cin = 2, cout = 3, k = 3, stride = 2, pad = 1, extra = 1;
  const std::int64_t ho = (h - 1) * stride - 2 * pad + k + extra,
                     wo = (w - 1) * stride - 2 * pad + k + extra;  // 6 and 4
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(layout == Layout::nhwc);
    const bool nhwc = layout == Layout::nhwc;
    auto layer = test::plugins().create_as<Layer>("layer", "conv2d_transpose",
                                                  Params(nlohmann::json{{"filters", cout},
                                                                        {"kernel", k},
                                                                        {"stride", stride},
                                                                        {"padding", pad},
                                                                        {"output_padding", extra}},
                                                         "test"));
    LayerBuildContext ctx;
    ctx.input_shape = nhwc ? Shape{h, w, cin} : Shape{cin, h, w};
    ctx.dtype = DType::float64;
    ctx.layout = layout;
    ctx.max_batch = n;
    ctx.registry = &test::plugins();
    ctx.extensions.set(std::make_shared<ConvOptions>(ConvOptions{"i2c", Params()}));
    layer->build(ctx);
    REQUIRE(layer->output_shape() == (nhwc ? Shape{ho, wo, cout} : Shape{cout, ho, wo}));
    Tensor x = Tensor::zeros(ctx.input_shape.with_batch(n), DType::float64, layout);
    testing::fill_uniform(x, 3);
    auto params = layer->parameters();
    Tensor& wt = params[0].value;  // NHWC [k, k, out, in]; NCHW [in, out, k, k]
    testing::fill_uniform(wt, 4);
    testing::fill_uniform(params[1].value, 5);
    Tensor y = Tensor::zeros(layer->output_shape().with_batch(n), DType::float64, layout);
    layer->forward(x, y, Mode::train);

    auto xi = [&](auto s, auto iy, auto ix, auto c) {
      return nhwc ? ((s * h + iy) * w + ix) * cin + c : ((s * cin + c) * h + iy) * w + ix;
    };
    auto yi = [&](auto s, auto oy, auto ox, auto c) {
      return nhwc ? ((s * ho + oy) * wo + ox) * cout + c : ((s * cout + c) * ho + oy) * wo + ox;
    };
    auto wi = [&](auto ky, auto kx, auto co, auto ci) {
      return nhwc ? ((ky * k + kx) * cout + co) * cin + ci : ((ci * cout + co) * k + ky) * k + kx;
    };
    std::vector<double> expected(static_cast<std::size_t>(y.numel()), 0.0);
    const double* xp = x.data<double>();
    const double* wp = wt.data<double>();
    const double* bp = params[1].value.data<double>();
    for (std::int64_t s = 0; s < n; ++s)
      for (std::int64_t oy = 0; oy < ho; ++oy)
        for (std::int64_t ox = 0; ox < wo; ++ox)
          for (std::int64_t co = 0; co < cout; ++co) expected[yi(s, oy, ox, co)] = bp[co];
    for (std::int64_t s = 0; s < n; ++s)
      for (std::int64_t iy = 0; iy < h; ++iy)
        for (std::int64_t ix = 0; ix < w; ++ix)
          for (std::int64_t ci = 0; ci < cin; ++ci)
            for (std::int64_t ky = 0; ky < k; ++ky)
              for (std::int64_t kx = 0; kx < k; ++kx) {
                const std::int64_t oy = iy * stride - pad + ky, ox = ix * stride - pad + kx;
                if (oy < 0 || ox < 0 || oy >= ho || ox >= wo) continue;
                for (std::int64_t co = 0; co < cout; ++co)
                  expected[yi(s, oy, ox, co)] += xp[xi(s, iy, ix, ci)] * wp[wi(ky, kx, co, ci)];
              }
    double worst = 0;
    for (std::int64_t i = 0; i < y.numel(); ++i)
      worst = std::max(worst, std::abs(y.data<double>()[i] - expected[i]));
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("conv2d_transpose names a bad output_padding and a window with no output") {
  CHECK(test::error_of([] {
          test::plugins().create("layer", "conv2d_transpose",
                                 Params(nlohmann::json{{"filters", 2}, {"output_padding", 2}},
                                        "model.json: layers[3]"));
        }).find("model.json: layers[3].output_padding") != std::string::npos);
}
