// conv2d's and depthwise_conv2d's shapes and flops from their definitions: a filter reads the
// channels of its group only (groups G: C / G of them; depthwise: one), in both layouts.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "dtnn/conv_options.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/registry.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

std::shared_ptr<Layer> built(const std::string& name, const nlohmann::json& params,
                             const Shape& input, Layout layout) {
  auto layer = test::plugins().create_as<Layer>("layer", name, Params(params, "test"));
  LayerBuildContext ctx;
  ctx.input_shape = input;
  ctx.dtype = DType::float32;
  ctx.layout = layout;
  ctx.max_batch = 2;
  ctx.registry = &test::plugins();
  ctx.extensions.set(std::make_shared<ConvOptions>(ConvOptions{"i2c", Params()}));
  layer->build(ctx);
  return layer;
}

}  // namespace

TEST_CASE("a grouped conv2d counts only the products of each filter's group") {
  // 6 input channels in 2 groups, 4 filters of 3x3 with padding 1: 8x5 outputs per filter, each
  // a sum over 3 channels x 9 taps.
  const std::int64_t h = 8, w = 5, c = 6, k = 4, groups = 2, batch = 3;
  const double products = double(batch) * h * w * k * (c / groups) * 9;
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(layout == Layout::nhwc);
    const bool nhwc = layout == Layout::nhwc;
    auto layer =
        built("conv2d", {{"filters", k}, {"kernel", 3}, {"padding", 1}, {"groups", groups}},
              nhwc ? Shape{h, w, c} : Shape{c, h, w}, layout);
    CHECK(layer->forward_flops(batch) == doctest::Approx(2 * products));
    CHECK(layer->output_shape() == (nhwc ? Shape{h, w, k} : Shape{k, h, w}));
    const Shape filter = nhwc ? Shape{3, 3, c / groups, k} : Shape{k, c / groups, 3, 3};
    CHECK(layer->weights_shape() == filter.str());
    CHECK(layer->parameters().size() == 2);
  }
}

TEST_CASE("depthwise_conv2d counts one channel's window per output") {
  const std::int64_t h = 7, w = 6, c = 5, batch = 2;
  const std::int64_t ho = (h - 3) / 2 + 1, wo = (w - 3) / 2 + 1;  // 3x3, stride 2, no padding
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(layout == Layout::nhwc);
    const bool nhwc = layout == Layout::nhwc;
    auto layer = built("depthwise_conv2d", {{"kernel", 3}, {"stride", 2}, {"use_bias", false}},
                       nhwc ? Shape{h, w, c} : Shape{c, h, w}, layout);
    CHECK(layer->forward_flops(batch) == doctest::Approx(2.0 * batch * ho * wo * c * 9));
    CHECK(layer->output_shape() == (nhwc ? Shape{ho, wo, c} : Shape{c, ho, wo}));
    CHECK(layer->weights_shape() == (nhwc ? Shape{3, 3, c} : Shape{c, 3, 3}).str());
    CHECK(layer->parameters().size() == 1);
  }
}

TEST_CASE("conv2d names the layer when its input is not an image") {
  CHECK(test::error_of([] {
          built("conv2d", {{"filters", 2}}, Shape{12}, Layout::nhwc);
        }) == "conv2d expects image input (H, W, C), got (12,)");
}
