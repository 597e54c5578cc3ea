#include "dtnn/testing/conv_conformance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "dtnn/params.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/testing/guarded.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

double conv_tolerance(DType dtype) { return dtype == DType::float64 ? 1e-10 : 2e-5; }

double format_bound(Precision p, double depth, double magnitude) {
  const double u = unit_roundoff(p), eps = std::ldexp(1.0, -24);
  return (2 * u + u * u + (depth + 2) * eps) * magnitude + depth * eps;
}

namespace {

// t as float64 (abs: its magnitudes), same shape and layout.
Tensor as_float64(const Tensor& t, bool abs = false) {
  Tensor out = Tensor::empty(t.shape(), DType::float64, t.layout());
  for (std::int64_t i = 0; i < t.numel(); ++i)
    set_value_at(out, i, abs ? std::abs(value_at(t, i)) : value_at(t, i));
  return out;
}

// The largest ratio of |got - expected| to the format's bound at each element (magnitude: the
// pass on the operands' magnitudes; start: what backward-filter accumulated onto, else null).
double bound_ratio(Precision p, double depth, const Tensor& got, const Tensor& expected,
                   const Tensor& magnitude, const Tensor* start) {
  double worst = 0;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const double g = value_at(got, i), e = value_at(expected, i);
    if (!std::isfinite(g)) return INFINITY;
    double bound = format_bound(p, depth, value_at(magnitude, i));
    if (start) bound += (depth + 2) * std::ldexp(1.0, -24) * std::abs(value_at(*start, i));
    worst = std::max(worst, std::abs(g - e) / bound);
  }
  return worst;
}

// The three passes of `algo` in a low precision against reference in float64 on the same float32
// operands (and on their magnitudes, for the bound). error: the worst ratio to the bound.
std::vector<ConvCheck> check_low_precision(ConvAlgorithm& algo, ConvAlgorithm& ref,
                                           const ConvGeometry& g) {
  ConvGeometry g64 = g;
  g64.dtype = DType::float64;
  g64.precision = Precision::fp32;
  ref.prepare(g64);
  const Layout lay = g.layout;
  Tensor x = Tensor::empty(g.x_shape(g.n), DType::float32, lay),
         w = Tensor::empty(g.w_shape(), DType::float32, lay),
         dy = Tensor::empty(g.y_shape(g.n), DType::float32, lay);
  fill_uniform(x, 1);
  fill_uniform(w, 2);
  fill_uniform(dy, 3);
  const Tensor x64 = as_float64(x), w64 = as_float64(w), dy64 = as_float64(dy);
  const Tensor ax = as_float64(x, true), aw = as_float64(w, true), ady = as_float64(dy, true);
  const double taps = static_cast<double>(g.kh * g.kw);
  std::vector<ConvCheck> checks;
  std::string why;
  // compute(got, expected, magnitude) runs the pass and returns the worst ratio to the bound.
  auto run = [&](const char* name, ConvPass pass, const Shape& shape, auto&& compute) {
    ConvCheck c{name, algo.supports(g, pass, why), 0.0, ""};
    if (c.supported) {
      GuardedTensor got(shape, DType::float32, lay);
      Tensor expected = Tensor::empty(shape, DType::float64, lay),
             magnitude = Tensor::empty(shape, DType::float64, lay);
      c.error = compute(got.tensor(), expected, magnitude);
      c.guard = got.check_guards();
    }
    checks.push_back(c);
  };
  run("forward", ConvPass::forward, g.y_shape(g.n),
      [&](Tensor& y, Tensor& expected, Tensor& magnitude) {
        algo.forward(x, w, y);
        ref.forward(x64, w64, expected);
        ref.forward(ax, aw, magnitude);
        return bound_ratio(g.precision, static_cast<double>(g.c / g.groups) * taps, y, expected,
                           magnitude, nullptr);
      });
  run("backward-data", ConvPass::backward_data, g.x_shape(g.n),
      [&](Tensor& dx, Tensor& expected, Tensor& magnitude) {
        fill_uniform(dx, 9);  // must be overwritten, not added to
        algo.backward_data(dy, w, dx);
        ref.backward_data(dy64, w64, expected);
        ref.backward_data(ady, aw, magnitude);
        return bound_ratio(g.precision, static_cast<double>(g.k / g.groups) * taps, dx, expected,
                           magnitude, nullptr);
      });
  const double pixels = static_cast<double>(g.n * g.ho() * g.wo());
  run("backward-filter", ConvPass::backward_filter, g.w_shape(),
      [&](Tensor& dw, Tensor& expected, Tensor& magnitude) {
        fill_uniform(dw, 4);
        Tensor start = as_float64(dw);
        fill_uniform(expected, 4);
        for (std::int64_t i = 0; i < magnitude.numel(); ++i) set_value_at(magnitude, i, 0.0);
        Tensor y = Tensor::empty(g.y_shape(g.n), DType::float32, lay);
        algo.forward(x, w, y);  // as in training: forward first, so cached state is exercised
        algo.backward_filter(x, dy, dw);
        ref.backward_filter(x64, dy64, expected);
        ref.backward_filter(ax, ady, magnitude);
        return bound_ratio(g.precision, pixels, dw, expected, magnitude, &start);
      });
  return checks;
}

}  // namespace

std::vector<ConvGeometry> conformance_geometries(DType dtype, Layout layout) {
  std::vector<ConvGeometry> out;
  for (std::int64_t kernel : {1, 3, 5})
    for (std::int64_t stride : {1, 2})
      for (std::int64_t pad : {0, 1, 2})
        for (std::int64_t batch : {1, 3})
          for (std::int64_t dilation : {1, 2}) {
            if (dilation == 2 && (kernel != 3 || batch != 3)) continue;
            ConvGeometry g;
            g.n = batch;
            g.h = 7;
            g.w = 9;  // non-square
            g.c = 3;
            g.k = 5;
            g.kh = g.kw = kernel;
            g.stride_h = g.stride_w = stride;
            g.pad_h = g.pad_w = pad;
            g.dilation_h = g.dilation_w = dilation;
            g.dtype = dtype;
            g.layout = layout;
            if (g.ho() < 1 || g.wo() < 1) continue;
            out.push_back(g);
          }
  // Rectangular kernel, stride and padding.
  ConvGeometry r;
  r.n = 2, r.h = 8, r.w = 6, r.c = 4, r.k = 3, r.kh = 3, r.kw = 1, r.stride_h = 2, r.stride_w = 1;
  r.pad_h = 1, r.pad_w = 0, r.dtype = dtype, r.layout = layout;
  out.push_back(r);
  // Edge cases of blocked and tiled algorithms: channel counts that are no multiple of a vector
  // (or of a Winograd chunk), sizes that leave partial 2x2 and 4x4 tiles, padding wider than the
  // filter's reach (backward-data then crops), 1x1 filters over wide channels, more input
  // channels than one cache slice (direct's 128), strided layers with wide channels, even (2x2)
  // filters, and 2x2 and 5x5 ones over more channels than a Winograd chunk.
  struct Edge {
    std::int64_t n, h, w, c, k, kernel, pad, stride = 1;
  };
  for (const Edge& e :
       {Edge{2, 11, 13, 37, 35, 3, 1}, Edge{1, 6, 5, 16, 33, 3, 0}, Edge{2, 5, 6, 3, 4, 3, 3},
        Edge{3, 4, 4, 40, 9, 3, 2}, Edge{2, 5, 7, 17, 70, 1, 0}, Edge{2, 6, 5, 150, 40, 3, 1},
        Edge{2, 9, 10, 20, 36, 3, 1, 2}, Edge{2, 7, 8, 5, 6, 2, 0}, Edge{1, 6, 7, 33, 17, 2, 1},
        Edge{2, 8, 9, 34, 20, 5, 2}}) {
    ConvGeometry g;
    g.n = e.n, g.h = e.h, g.w = e.w, g.c = e.c, g.k = e.k, g.kh = g.kw = e.kernel;
    g.stride_h = g.stride_w = e.stride;
    g.pad_h = g.pad_w = e.pad, g.dtype = dtype, g.layout = layout;
    out.push_back(g);
  }
  // Grouped (algorithms that compute no groups say so and are skipped): two groups, ResNeXt-like
  // groups of 2 channels with stride, a 1x1 grouped layer, one group per input channel.
  struct Grouped {
    std::int64_t n, c, k, groups, kernel, pad, stride;
  };
  for (const Grouped& e : {Grouped{2, 6, 4, 2, 3, 1, 1}, Grouped{3, 8, 8, 4, 3, 1, 2},
                           Grouped{2, 6, 9, 3, 1, 0, 1}, Grouped{1, 4, 8, 4, 3, 0, 1}}) {
    ConvGeometry g;
    g.n = e.n, g.h = 7, g.w = 6, g.c = e.c, g.k = e.k, g.kh = g.kw = e.kernel;
    g.groups = e.groups, g.stride_h = g.stride_w = e.stride, g.pad_h = g.pad_w = e.pad;
    g.dtype = dtype, g.layout = layout;
    out.push_back(g);
  }
  return out;
}

std::vector<ConvCheck> check_conv_algorithm(const Registry& registry, const std::string& algorithm,
                                            const ConvGeometry& g) {
  return check_conv_algorithm(registry, algorithm, g, Params());
}

std::vector<ConvCheck> check_conv_algorithm(const Registry& registry, const std::string& algorithm,
                                            const ConvGeometry& g, const Params& params) {
  auto algo = registry.create_as<ConvAlgorithm>("conv", algorithm, params);
  auto ref = registry.create_as<ConvAlgorithm>("conv", "reference", Params());
  std::string unused;
  bool any = false;  // an algorithm is prepared only for a geometry it computes some pass of
  for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
    any = any || algo->supports(g, pass, unused);
  if (g.groups > 1 && !takes_groups(registry, algorithm)) any = false;  // it knows of no groups
  if (!any) {
    std::vector<ConvCheck> none;
    for (const char* pass : {"forward", "backward-data", "backward-filter"})
      none.push_back(ConvCheck{pass, false, 0.0, ""});
    return none;
  }
  algo->prepare(g);
  if (g.precision != Precision::fp32) return check_low_precision(*algo, *ref, g);
  ref->prepare(g);
  const DType dt = g.dtype;
  const Layout lay = g.layout;
  Tensor x = Tensor::empty(g.x_shape(g.n), dt, lay), w = Tensor::empty(g.w_shape(), dt, lay);
  Tensor dy = Tensor::empty(g.y_shape(g.n), dt, lay);
  fill_uniform(x, 1);
  fill_uniform(w, 2);
  fill_uniform(dy, 3);
  std::vector<ConvCheck> checks;
  std::string why;

  {  // forward
    ConvCheck c{"forward", true, 0.0, ""};
    c.supported = algo->supports(g, ConvPass::forward, why);
    if (c.supported) {
      GuardedTensor y(g.y_shape(g.n), dt, lay);
      Tensor expected = Tensor::empty(g.y_shape(g.n), dt, lay);
      algo->forward(x, w, y.tensor());
      ref->forward(x, w, expected);
      c.error = relative_error(y.tensor(), expected);
      c.guard = y.check_guards();
    }
    checks.push_back(c);
  }
  {  // backward-data
    ConvCheck c{"backward-data", true, 0.0, ""};
    c.supported = algo->supports(g, ConvPass::backward_data, why);
    if (c.supported) {
      GuardedTensor dx(g.x_shape(g.n), dt, lay);
      fill_uniform(dx.tensor(), 9);  // must be overwritten, not added to
      Tensor expected = Tensor::empty(g.x_shape(g.n), dt, lay);
      algo->backward_data(dy, w, dx.tensor());
      ref->backward_data(dy, w, expected);
      c.error = relative_error(dx.tensor(), expected);
      c.guard = dx.check_guards();
    }
    checks.push_back(c);
  }
  {  // backward-filter: accumulates into dw, checked from a non-zero start
    ConvCheck c{"backward-filter", true, 0.0, ""};
    c.supported = algo->supports(g, ConvPass::backward_filter, why);
    if (c.supported) {
      GuardedTensor dw(g.w_shape(), dt, lay);
      Tensor expected = Tensor::empty(g.w_shape(), dt, lay);
      fill_uniform(dw.tensor(), 4);
      fill_uniform(expected, 4);
      Tensor y = Tensor::empty(g.y_shape(g.n), dt, lay);
      algo->forward(x, w, y);  // as in training: forward first, so cached state is exercised
      algo->backward_filter(x, dy, dw.tensor());
      ref->backward_filter(x, dy, expected);
      c.error = relative_error(dw.tensor(), expected);
      c.guard = dw.check_guards();
    }
    checks.push_back(c);
  }
  return checks;
}

// The conv driver of plugin_conformance.hpp: the sweep at the case's parameters.
std::vector<Check> check_conv(const Registry& registry, const PluginRecord& record,
                              const std::string& case_json) {
  const nlohmann::json params =
      nlohmann::json::parse(case_json).value("params", nlohmann::json::object());
  std::vector<Check> out;
  // The three checks at g: an error within `tolerance` passes (for a lower precision the error is
  // already the ratio to the format's bound, tolerance 1).
  auto sweep = [&](const ConvGeometry& g, double tolerance) {
    const std::string setting = "params " + params.dump() + ", " + g.str();
    const bool low = g.precision != Precision::fp32;
    for (const ConvCheck& c :
         check_conv_algorithm(registry, record.name, g, Params(params, "conformance"))) {
      if (!c.supported) {
        out.push_back({c.pass, setting, false, true, "not supported"});
        continue;
      }
      char detail[96];
      if (low)
        std::snprintf(detail, sizeof detail, "error %.3g of the %s bound", c.error,
                      to_string(g.precision));
      else
        std::snprintf(detail, sizeof detail, "relative error %.3g (tolerance %.3g)", c.error,
                      tolerance);
      out.push_back({c.pass + (low ? " against reference in float64" : " against reference"),
                     setting, true, c.error <= tolerance && c.guard.empty(),
                     detail + (c.guard.empty() ? "" : "; guard zone: " + c.guard)});
    }
  };
  for (DType dtype : {DType::float32, DType::float64})
    for (Layout layout : {Layout::nhwc, Layout::nchw})
      for (const ConvGeometry& g : conformance_geometries(dtype, layout))
        sweep(g, conv_tolerance(dtype));
  // Each lower precision the algorithm lists, in float32, against the format's bound.
  for (Precision p : {Precision::bf16, Precision::fp16}) {
    if (!takes_precision(registry, record.name, p)) continue;
    for (Layout layout : {Layout::nhwc, Layout::nchw})
      for (ConvGeometry g : conformance_geometries(DType::float32, layout)) {
        g.precision = p;
        sweep(g, 1.0);
      }
  }
  return out;
}

}  // namespace dtnn::testing
