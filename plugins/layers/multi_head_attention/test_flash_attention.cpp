// multi_head_attention's two CPU kernels agree: the fused one (flash_attention.hpp: blocks of
// query rows by blocks of keys, the scores computed again in backward) gives the stored one's
// output and gradients over several blocks of both, padded and causal, in float32 and in bf16;
// and "auto" picks the fused kernel where the probabilities would be large.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "dtnn/layer.hpp"
#include "dtnn/sequence_context.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

struct Run {
  Tensor y, dx;
  std::vector<Tensor> grads;
  std::string attributes;
};

// One forward and backward of a fresh layer with `params` on x, dy, the lengths padding the
// batch's sequences (empty: none).
Run run_attention(json params, const Tensor& x, const Tensor& dy,
                  const std::vector<std::int64_t>& lengths, Precision precision) {
  auto layer =
      test::plugins().create_as<Layer>("layer", "multi_head_attention", Params(params, "test"));
  LayerBuildContext ctx;
  ctx.input_shape = Shape{x.dim(1), x.dim(2)};
  ctx.max_batch = x.dim(0);
  ctx.seed = 11;
  ctx.precision = precision;
  ctx.extensions.shared<SequenceContext>().lengths->of = lengths;
  layer->build(ctx);
  Run r{Tensor::empty(x.shape(), DType::float32),
        Tensor::empty(x.shape(), DType::float32),
        {},
        layer->attributes()};
  layer->forward(x, r.y, Mode::train);
  layer->backward(x, r.y, dy, &r.dx);
  for (const Parameter& p : layer->parameters()) {
    r.grads.push_back(Tensor::empty(p.grad.shape(), DType::float32));
    r.grads.back().copy_from(p.grad);
  }
  return r;
}

// max |a - b| / max |b|
double relative_difference(const Tensor& a, const Tensor& b) {
  double diff = 0, top = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, std::abs(double(a.data<float>()[i]) - double(b.data<float>()[i])));
    top = std::max(top, std::abs(double(b.data<float>()[i])));
  }
  return diff / top;
}

Tensor waves(const Shape& shape, double frequency) {
  Tensor t = Tensor::empty(shape, DType::float32);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = float(std::sin(frequency * double(i)) + 0.3 * std::cos(0.011 * double(i)));
  return t;
}

}  // namespace

TEST_CASE("fused attention gives the stored kernel's output and gradients, over several blocks") {
  // 900 positions: two blocks of 512 keys and eight (causal: fifteen) blocks of query rows in the
  // fused kernel; in the stored one, two blocks of rows when not causal (kStoredBlockScores).
  struct Case {
    bool causal;
    std::vector<std::int64_t> lengths;
    Precision precision;
    double tolerance;  // float32's sums in another order; bf16 rounds other operands
  };
  const Case cases[] = {{false, {}, Precision::fp32, 1e-5},
                        {false, {900, 530}, Precision::fp32, 1e-5},
                        {true, {}, Precision::fp32, 1e-5},
                        {true, {650, 900}, Precision::fp32, 1e-5},
                        {true, {}, Precision::bf16, 3e-2}};
  const Tensor x = waves(Shape{2, 900, 16}, 0.37);
  const Tensor dy = waves(Shape{2, 900, 16}, 0.71);
  for (const Case& c : cases) {
    CAPTURE(c.causal);
    CAPTURE(c.lengths.size());
    CAPTURE(c.precision == Precision::bf16);
    json params{{"heads", 2}, {"causal", c.causal}, {"kernel", "stored"}};
    const Run stored = run_attention(params, x, dy, c.lengths, c.precision);
    params["kernel"] = "fused";
    const Run fused = run_attention(params, x, dy, c.lengths, c.precision);
    CHECK(fused.attributes.find("fused") != std::string::npos);
    CHECK(stored.attributes.find("fused") == std::string::npos);
    CHECK(relative_difference(fused.y, stored.y) < c.tolerance);
    CHECK(relative_difference(fused.dx, stored.dx) < c.tolerance);
    REQUIRE(fused.grads.size() == stored.grads.size());
    for (std::size_t i = 0; i < fused.grads.size(); ++i) {
      CAPTURE(i);
      CHECK(relative_difference(fused.grads[i], stored.grads[i]) < c.tolerance);
    }
  }
}

TEST_CASE("attention's \"auto\" kernel fuses where the probabilities would take 256 MiB") {
  auto attributes = [](json params, std::int64_t positions, std::int64_t batch) {
    auto layer =
        test::plugins().create_as<Layer>("layer", "multi_head_attention", Params(params, "test"));
    LayerBuildContext ctx;
    ctx.input_shape = Shape{positions, 8};
    ctx.max_batch = batch;
    layer->build(ctx);
    return layer->attributes();
  };
  const auto fused = [](const std::string& a) { return a.find("fused") != std::string::npos; };
  // batch x heads x positions^2 x 4 bytes
  CHECK_FALSE(fused(attributes(json{{"heads", 2}, {"causal", true}}, 512, 8)));  // 16 MiB
  CHECK_FALSE(fused(attributes(json{{"heads", 2}}, 1024, 8)));                   // 64 MiB
  CHECK(fused(attributes(json{{"heads", 4}}, 2048, 4)));                         // 256 MiB
  CHECK(fused(attributes(json{{"heads", 4}, {"causal", true}}, 4096, 1)));       // 256 MiB
  CHECK(fused(attributes(json{{"heads", 1}, {"kernel", "fused"}}, 16, 1)));
  CHECK_FALSE(fused(attributes(json{{"heads", 4}, {"kernel", "stored"}}, 2048, 4)));
}
