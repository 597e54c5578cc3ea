// Int8 inference's core (docs/precision.md, "int8 inference"): the kernels against the exact
// integer product at every instruction-set level, the quantisation against its stated bound, and
// the int8 model file (round trip, damage, a model it does not fit).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/int8_gemm.hpp"
#include "dtnn/int8_model.hpp"
#include "dtnn/int8_product.hpp"
#include "dtnn/model.hpp"
#include "dtnn/rng.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

struct Case {
  std::int64_t m, n, segments, groups;
};

// y as the kernels define it, from 64-bit sums of A's runs and B's rows.
std::vector<float> exact(const Case& c, const std::vector<std::uint8_t>& a, const Int8Rows& rows,
                         const std::vector<std::int8_t>& b, const Int8Epilogue& e) {
  std::vector<float> y(static_cast<std::size_t>(c.m * c.n));
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      std::int64_t sum = e.offset[j];
      for (std::int64_t s = 0; s < c.segments; ++s)
        for (std::int64_t q = 0; q < 4 * c.groups; ++q)
          sum += std::int64_t(
                     a[static_cast<std::size_t>(i * rows.lda + s * rows.segment_stride + q)]) *
                 b[static_cast<std::size_t>((s * 4 * c.groups + q) * c.n + j)];
      float v = std::fma(static_cast<float>(sum), e.scale[j], e.bias ? e.bias[j] : 0.0f);
      if (e.relu && !(v > 0)) v = 0;
      y[static_cast<std::size_t>(i * c.n + j)] = v;
    }
  return y;
}

bool cpu_has_vnni() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

Model build(const std::string& layers, Shape input, Layout layout = Layout::nhwc) {
  ModelOptions o;
  o.max_batch = 4;
  o.seed = 11;
  o.layout = layout;
  o.conv_algorithm = "reference";
  return Model(parse_model_spec(json::parse(R"({"name": "m", "layers": )" + layers + "}"), "test"),
               o, input, test::plugins());
}

Tensor inputs(const Shape& shape, Layout layout = Layout::nhwc) {
  Tensor x = Tensor::empty(shape, DType::float32, layout);
  for (std::int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] =
        static_cast<float>(std::sin(0.37 * double(i)) + 0.2 * std::cos(1.3 * double(i)));
  return x;
}

// Calibrates every product of m on x and quantises it.
void quantize(Model& m, const Tensor& x) {
  for (const auto& p : int8_products(m)) p.product->set_observing(true);
  m.forward(x, Mode::eval);
  for (const auto& p : int8_products(m)) {
    p.product->set_observing(false);
    p.product->quantize(p.product->range());
  }
}

std::vector<float> values(const Tensor& t) {
  return {t.data<float>(), t.data<float>() + t.numel()};
}

}  // namespace

TEST_CASE("every int8 kernel gives the exact integer product and its epilogue, bit for bit") {
  Rng rng(5);
  const std::vector<Case> cases = {{1, 1, 1, 1},   {5, 4, 1, 3},     {13, 8, 3, 1},
                                   {12, 16, 1, 2}, {25, 17, 3, 3},   {30, 32, 1, 9},
                                   {97, 33, 2, 5}, {200, 70, 1, 25}, {3, 64, 4, 2}};
  int kernels_run = 0;
  bool ran_vnni = false;
  for (isa::Level level : int8_gemm_kernels().built()) {
    const Int8GemmKernels* table = int8_gemm_kernels().at(level);
    if (!table) continue;
    std::vector<Int8GemmKernel> kernels{table->loops};
    if (table->avx2) kernels.push_back(table->avx2);
    if (table->vnni && cpu_has_vnni()) kernels.push_back(table->vnni), ran_vnni = true;
    for (Int8GemmKernel kernel : kernels) {
      ++kernels_run;
      for (const Case& c : cases)
        for (const bool relu : {false, true}) {
          const std::string level_name = isa::name(level);
          CAPTURE(level_name);
          CAPTURE(c.m);
          CAPTURE(c.n);
          CAPTURE(c.segments);
          CAPTURE(c.groups);
          CAPTURE(relu);
          const std::int64_t k = c.segments * 4 * c.groups;
          // Runs 4 bytes apart beyond their own length, rows at an odd stride: the gaps hold
          // bytes no kernel may read into the sums.
          const Int8Rows shape{nullptr, c.segments * (4 * c.groups + 4) + 3, c.segments, c.groups,
                               4 * c.groups + 4};
          std::vector<std::uint8_t> a(static_cast<std::size_t>(c.m * shape.lda + 16));
          for (auto& v : a) v = static_cast<std::uint8_t>(1 + rng.uniform() * 255);  // codes 1-255
          std::vector<std::int8_t> b(static_cast<std::size_t>(k * c.n));
          for (auto& v : b) v = static_cast<std::int8_t>(std::lround(rng.uniform() * 254 - 127));
          b[0] = -127, b[1] = 127;  // the extremes, against the largest codes below
          a[0] = 255, a[1] = 1;
          std::vector<std::int32_t> offset(static_cast<std::size_t>(c.n));
          std::vector<float> scale(offset.size()), bias(offset.size());
          for (std::int64_t j = 0; j < c.n; ++j) {
            scale[j] = static_cast<float>(1e-4 * (1 + rng.uniform()));
            bias[j] = static_cast<float>(rng.uniform() - 0.5);
          }
          for (std::int64_t kk = 0; kk < k; ++kk)  // -128 times the column sums, as required
            for (std::int64_t j = 0; j < c.n; ++j) offset[j] -= 128 * b[kk * c.n + j];
          const Int8Epilogue e{offset.data(), scale.data(), bias.data(), relu};
          Int8Rows rows = shape;
          rows.a = a.data();
          const std::vector<std::int8_t> packed = pack_int8_b(b.data(), k, c.n);
          std::vector<float> y(static_cast<std::size_t>(c.m * (c.n + 3)), -7.0f);
          kernel(c.m, c.n, rows, packed.data(), e, y.data(), c.n + 3);
          const std::vector<float> want = exact(c, a, rows, b, e);
          for (std::int64_t i = 0; i < c.m; ++i) {
            for (std::int64_t j = 0; j < c.n; ++j)
              REQUIRE(y[static_cast<std::size_t>(i * (c.n + 3) + j)] ==
                      want[static_cast<std::size_t>(i * c.n + j)]);
            for (std::int64_t j = c.n; j < c.n + 3; ++j)  // past n: untouched
              REQUIRE(y[static_cast<std::size_t>(i * (c.n + 3) + j)] == -7.0f);
          }
        }
    }
  }
  CHECK(kernels_run >= 1);
  if (cpu_has_vnni() && int8_gemm_kernels().at(isa::Level::avx512)) CHECK(ran_vnni);
}

TEST_CASE("an int8 product stays within its quantisation bound and saturates beyond its range") {
  constexpr std::int64_t k = 50, n = 7, rows = 5;
  Rng rng(3);
  std::vector<float> w(static_cast<std::size_t>(k * n)), x(static_cast<std::size_t>(rows * k));
  for (std::int64_t i = 0; i < k * n; ++i)  // columns of different sizes: a scale each
    w[static_cast<std::size_t>(i)] =
        static_cast<float>((rng.uniform() - 0.5) * (0.25 + double(i % n)));
  for (auto& v : x) v = static_cast<float>(2 * rng.uniform() - 1);
  Int8Product p;
  p.bind(k, n, [&] { return w; });
  p.set_observing(true);
  p.observe(x.data(), rows * k);
  CHECK(p.range() <= 1.0f);
  p.quantize(p.range());
  REQUIRE(p.ready());
  CHECK(p.input_scale() == doctest::Approx(p.range() / 127.0f));

  std::vector<std::uint8_t> codes(static_cast<std::size_t>(rows * p.padded_k()), 0xff);
  for (std::int64_t r = 0; r < rows; ++r)
    p.encode(x.data() + r * k, k, codes.data() + r * p.padded_k());
  std::vector<float> y(static_cast<std::size_t>(rows * n));
  p.run(rows, p.rows(codes.data(), p.padded_k()), nullptr, false, y.data(), n);
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      double exact = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) exact += double(x[r * k + kk]) * w[kk * n + j];
      const double bound = quantization_bound(x.data() + r * k, w.data(), k, n, j, p.input_scale(),
                                              p.weight_scales()[static_cast<std::size_t>(j)]);
      CHECK(std::fabs(y[r * n + j] - exact) <= bound);
      worst = std::max(worst, std::fabs(y[r * n + j] - exact) / bound);
    }
  CHECK(worst > 0.05);  // the bound is not vacuous: the errors reach a fair share of it

  const float beyond[3] = {2 * p.range(), -2 * p.range(), 0.0f};
  std::uint8_t c[3];
  p.encode(beyond, 3, c);
  CHECK(c[0] == 255);
  CHECK(c[1] == 1);
  CHECK(c[2] == Int8Product::kZeroCode);

  Int8Product q;
  q.bind(k, n, {});
  CHECK(test::error_of([&] { q.load(p.values(), {1.0f}, 1.0f); }).find("1 scales") !=
        std::string::npos);
  std::vector<std::int8_t> bad = p.values();
  bad[3] = -128;
  CHECK(test::error_of([&] { q.load(bad, p.weight_scales(), 1.0f); }).find("-128") !=
        std::string::npos);
  CHECK(test::error_of([&] { q.load(p.values(), p.weight_scales(), NAN); }).find("finite") !=
        std::string::npos);
  CHECK_FALSE(q.ready());
  const float nan = NAN;
  p.set_observing(true, "layer 4 (fc)");
  CHECK(test::error_of([&] { p.observe(&nan, 1); }) ==
        "int8 calibration: the input of layer 4 (fc) holds NaN or infinity");
}

TEST_CASE(
    "an int8 model file loads into a fresh model bit for bit, and refuses damage and misfits") {
  const std::string layers = R"([
    {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1},
    {"type": "add", "paths": [[{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1,
                                "activation": "relu"}], []]},
    {"type": "flatten"}, {"type": "fc", "units": 5}])";
  const Shape input{6, 6, 2};
  Model a = build(layers, input);
  const Tensor x = inputs(input.with_batch(3));
  quantize(a, x);
  const std::vector<Int8ProductRef> refs = int8_products(a);
  REQUIRE(refs.size() == 3);
  CHECK(refs[1].layer == "1.path0.0");
  CHECK(runs_int8(a));
  const std::vector<float> ya = values(a.forward(x, Mode::eval));
  const std::string bytes = encode_int8_model(a);

  Model b = build(layers, input);
  CHECK_FALSE(runs_int8(b));
  decode_int8_model(bytes, "a.int8", b);
  CHECK(runs_int8(b));
  CHECK(values(b.forward(x, Mode::eval)) == ya);

  Model c = build(layers, input);
  const std::vector<float> weights_before = values(c.parameters()[0].value);
  std::string damaged = bytes;
  damaged[damaged.size() / 2] ^= 0x10;
  CHECK(test::error_of([&] { decode_int8_model(damaged, "d.int8", c); }).find("d.int8: corrupt") !=
        std::string::npos);
  CHECK(test::error_of([&] {
          decode_int8_model(bytes.substr(0, 40), "t.int8", c);
        }).find("t.int8") != std::string::npos);
  CHECK(test::error_of([&] {
          decode_int8_model("DTNNCKPT", "c.int8", c);
        }).find("not a dtnn int8 model") != std::string::npos);
  Model wider = build(R"([
    {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1},
    {"type": "add", "paths": [[{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1,
                                "activation": "relu"}], []]},
    {"type": "flatten"}, {"type": "fc", "units": 6}])",
                      input);
  CHECK(test::error_of([&] {
          decode_int8_model(bytes, "a.int8", wider);
        }).find("products[2] is fc layer 3 144 x 5; the model has fc layer 3 144 x 6") !=
        std::string::npos);
  CHECK_FALSE(runs_int8(c));
  CHECK_FALSE(runs_int8(wider));
  CHECK(values(c.parameters()[0].value) == weights_before);

  Model unquantized = build(layers, input);
  CHECK(test::error_of([&] { encode_int8_model(unquantized); }).find("not quantised") !=
        std::string::npos);
}

TEST_CASE("int8 conv2d and fc compute the float layer on the dequantised operands") {
  struct LayerCase {
    std::string spec;
    Shape input;
  };
  const std::vector<LayerCase> cases = {
      {R"({"type": "conv2d", "filters": 5, "kernel": 3, "padding": 1, "activation": "relu"})",
       {7, 6, 3}},
      {R"({"type": "conv2d", "filters": 18, "kernel": [3, 2], "stride": 2})", {9, 8, 4}},
      {R"({"type": "conv2d", "filters": 33, "kernel": 1})", {4, 5, 6}},
      {R"({"type": "conv2d", "filters": 4, "kernel": 3, "padding": 2, "dilation": 2})", {7, 7, 2}},
      {R"({"type": "conv2d", "filters": 3, "kernel": 3, "padding": [1, 0], "dilation": [2, 1]})",
       {8, 6, 1}},
      {R"({"type": "fc", "units": 37})", {3, 4, 5}},
      {R"({"type": "fc", "units": 6, "flatten": false})", {4, 9}}};
  for (const LayerCase& c : cases)
    for (const Layout layout : {Layout::nhwc, Layout::nchw}) {
      CAPTURE(c.spec);
      CAPTURE(int(layout));
      const bool conv = c.spec.find("conv2d") != std::string::npos;
      if (!conv && layout == Layout::nchw) continue;
      const Shape input =
          layout == Layout::nhwc || !conv ? c.input : Shape{c.input[2], c.input[0], c.input[1]};
      Model q = build("[" + c.spec + "]", input, layout);
      const Tensor x = inputs(input.with_batch(3), layout);
      quantize(q, x);
      const Int8Product& p = *int8_products(q).at(0).product;
      const std::vector<float> yq = values(q.forward(x, Mode::eval));

      // The same layer in float32 on x and W as the int8 codes stand for them.
      Model f = build("[" + c.spec + "]", input, layout);
      const std::span<const Parameter> fp = f.parameters(), qp = q.parameters();
      for (std::size_t i = 1; i < fp.size(); ++i)  // the biases
        std::copy_n(qp[i].value.data<float>(), qp[i].value.numel(), fp[i].value.data<float>());
      float* w = fp[0].value.data<float>();
      const Shape ws = fp[0].value.shape();
      for (std::int64_t i = 0; i < fp[0].value.numel(); ++i) {
        // The product's row (ky, kx, c) and column k of filter element i, in the layout's order.
        std::int64_t row = i / p.n(), col = i % p.n();
        if (conv && layout == Layout::nchw) {  // [K, C, KH, KW]
          const std::int64_t kw = ws[3], kh = ws[2], ch = ws[1];
          const std::int64_t kx = i % kw, ky = i / kw % kh, cc = i / (kw * kh) % ch;
          col = i / (kw * kh * ch);
          row = (ky * kw + kx) * ch + cc;
        }
        w[i] = p.weight_scales()[static_cast<std::size_t>(col)] *
               p.values()[static_cast<std::size_t>(row * p.n() + col)];
      }
      Tensor xq = Tensor::empty(x.shape(), DType::float32, layout);
      std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.numel()));
      p.encode(x.data<float>(), x.numel(), codes.data());
      for (std::int64_t i = 0; i < x.numel(); ++i)
        xq.data<float>()[i] = p.input_scale() * (int(codes[static_cast<std::size_t>(i)]) - 128);
      const std::vector<float> yf = values(f.forward(xq, Mode::eval));

      REQUIRE(yq.size() == yf.size());
      double largest = 0;
      for (float v : yf) largest = std::max(largest, double(std::fabs(v)));
      for (std::size_t i = 0; i < yq.size(); ++i)
        REQUIRE(std::fabs(yq[i] - yf[i]) <= 1e-5 * largest);
      CHECK(largest > 0.1);
    }
}

TEST_CASE("int8 conv2d with a fused batchnorm and relu evaluates close to its float evaluation") {
  const std::string spec = R"([{"type": "conv2d", "filters": 6, "kernel": 3, "padding": 1,
      "activation": "relu", "batchnorm": {"gamma": 1.5, "beta": 0.25}}])";
  const Shape input{6, 5, 4};
  Model q = build(spec, input), f = build(spec, input);
  const Tensor x = inputs(input.with_batch(4));
  for (Model* m : {&q, &f}) m->forward(x, Mode::train);  // running statistics off their start
  quantize(q, x);
  const std::vector<float> yq = values(q.forward(x, Mode::eval)),
                           yf = values(f.forward(x, Mode::eval));
  double largest = 0, worst = 0;
  for (float v : yf) largest = std::max(largest, double(std::fabs(v)));
  for (std::size_t i = 0; i < yq.size(); ++i)
    worst = std::max(worst, double(std::fabs(yq[i] - yf[i])));
  // 8-bit codes of x and of the folded filter: about 2^-8 of the output's size.
  CHECK(worst <= 0.02 * largest);
  CHECK(worst > 0);  // it did run in int8
}
