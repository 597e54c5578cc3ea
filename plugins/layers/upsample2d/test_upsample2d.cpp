// upsample2d by hand: a 2x2 image of one channel becomes 4x4 blocks, in both layouts.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "dtnn/layer.hpp"
#include "dtnn/registry.hpp"
#include "test_support.hpp"

using namespace dtnn;

TEST_CASE("upsample2d repeats each pixel size_h x size_w times") {
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    auto layer = test::plugins().create_as<Layer>("layer", "upsample2d",
                                                  Params(nlohmann::json{{"size", {2, 3}}}, "test"));
    LayerBuildContext ctx;
    ctx.input_shape = layout == Layout::nhwc ? Shape{2, 2, 1} : Shape{1, 2, 2};
    ctx.dtype = DType::float32;
    ctx.layout = layout;
    layer->build(ctx);
    REQUIRE(layer->output_shape().numel() == 24);
    Tensor x = Tensor::zeros(ctx.input_shape.with_batch(1), DType::float32, layout);
    for (int i = 0; i < 4; ++i) x.data<float>()[i] = float(i + 1);
    Tensor y = Tensor::zeros(layer->output_shape().with_batch(1), DType::float32, layout);
    layer->forward(x, y, Mode::eval);
    const std::vector<float> expected = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                         3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    CHECK(std::vector<float>(y.data<float>(), y.data<float>() + 24) == expected);
  }
}
