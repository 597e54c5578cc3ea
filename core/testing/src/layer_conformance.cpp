// The layer driver of plugin_conformance.hpp.
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "dtnn/conv_options.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/model.hpp"
#include "dtnn/sequence_context.hpp"
#include "dtnn/testing/gradient_check.hpp"
#include "dtnn/testing/guarded.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

using nlohmann::json;

namespace {

constexpr double kGradientTolerance = 1e-7;  // float64 central differences, step 1e-6
constexpr double kExact = 1e-12;             // the same arithmetic done twice

std::string number(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", v);
  return s;
}

Check measured(const std::string& what, const std::string& setting, double error,
               double tolerance) {
  return {what, setting, true, error < tolerance,
          "error " + number(error) + " (tolerance " + number(tolerance) + ")"};
}

// All of t's values with the same dtype and shape, on the host.
Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype(), t.layout());
  c.copy_from(t);
  return c;
}

std::shared_ptr<SequenceLengths> lengths_from(const json& c, const char* key) {
  auto lengths = std::make_shared<SequenceLengths>();
  if (c.contains(key)) lengths->of = c[key].get<std::vector<std::int64_t>>();
  return lengths;
}

// What a case's sequence layers share (dtnn/sequence_context.hpp): "lengths" (per sample, padding
// after them); "memory": [S, Dm], a decoder memory of random values for `samples` samples, with
// "memory_lengths".
SequenceContext sequence_from(const json& c, std::int64_t samples) {
  SequenceContext s;
  s.lengths = lengths_from(c, "lengths");
  if (c.contains("memory")) {
    const json& dims = c["memory"];
    s.memory = std::make_shared<DecoderMemory>();
    s.memory->shape = Shape::from(dims.begin(), dims.end());
    s.memory->value = Tensor::empty(s.memory->shape.with_batch(samples), DType::float64);
    fill_uniform(s.memory->value, 41);
    s.memory->grad = Tensor::zeros(s.memory->value.shape(), DType::float64);
    s.memory->lengths = lengths_from(c, "memory_lengths");
  }
  return s;
}

// Layers of one type and parameters (an alias resolved) for a layout, built for an input.
class Builder {
 public:
  Builder(const Registry& registry, const PluginRecord& record, const json& params, Layout layout,
          SequenceContext sequence)
      : registry_(registry),
        device_(record.device),
        layout_(layout),
        sequence_(std::move(sequence)) {
    std::vector<LayerSpec> spec{{record.name, Params(params, "conformance: " + record.name)}};
    resolve_aliases(spec, registry);
    spec_ = spec.front();
  }

  std::shared_ptr<Layer> operator()(const Shape& input, std::int64_t max_batch) const {
    auto layer = registry_.create_as<Layer>("layer", spec_.type, spec_.params, {}, device_);
    LayerBuildContext ctx;
    ctx.input_shape = input;
    ctx.dtype = DType::float64;
    ctx.layout = layout_;
    ctx.max_batch = max_batch;
    ctx.seed = 11;
    ctx.registry = &registry_;
    ctx.extensions.set(std::make_shared<ConvOptions>(ConvOptions{"reference", Params()}));
    ctx.extensions.set(std::make_shared<SequenceContext>(sequence_));
    layer->build(ctx);
    return layer;
  }

 private:
  const Registry& registry_;
  Device device_;
  Layout layout_;
  SequenceContext sequence_;
  LayerSpec spec_;
};

// backward overwrites dx (pre-filled with NaN) and accumulates into parameter gradients that
// start non-zero: a second backward from the same forward gives the same dx and twice the
// gradients.
std::vector<Check> contracts(Layer& layer, const Shape& input, std::int64_t batch, Layout layout,
                             const InputValues& values, const std::string& setting) {
  Tensor x = Tensor::empty(input.with_batch(batch), DType::float64, layout);
  Tensor y = Tensor::empty(layer.output_shape().with_batch(batch), DType::float64, layout);
  Tensor dy = Tensor::empty(y.shape(), DType::float64, layout);
  Tensor dx = Tensor::zeros(x.shape(), DType::float64, layout);
  fill_input(x, 21, values);
  fill_uniform(dy, 22);
  std::vector<Parameter> params = layer.parameters();
  for (Parameter& p : params) p.grad.fill_zero();
  layer.forward(x, y, Mode::train);
  layer.backward(x, y, dy, &dx);
  const Tensor dx_once = copy_of(dx);
  std::vector<Tensor> once;
  for (const Parameter& p : params) once.push_back(copy_of(p.grad));

  for (std::int64_t i = 0; i < dx.numel(); ++i)
    set_value_at(dx, i, std::numeric_limits<double>::quiet_NaN());
  layer.backward(x, y, dy, &dx);
  std::vector<Check> out;
  out.push_back(measured("contract: backward overwrites dx (pre-filled with NaN)", setting,
                         relative_error(dx, dx_once), kExact));
  double worst = 0;
  for (std::size_t k = 0; k < params.size(); ++k) {
    Tensor twice = copy_of(once[k]);
    for (std::int64_t i = 0; i < twice.numel(); ++i) set_value_at(twice, i, 2 * value_at(twice, i));
    worst = std::max(worst, relative_error(params[k].grad, twice));
  }
  if (!params.empty())
    out.push_back(measured("contract: parameter gradients accumulate", setting, worst, kExact));
  return out;
}

// A layer built for batch + 2 samples, run on `batch` in evaluation: the full batch's first rows,
// and nothing written past the output.
Check partial_batch(const Builder& build, const Shape& input, std::int64_t batch, Layout layout,
                    const InputValues& values, const std::string& setting) {
  const std::int64_t full = batch + 2;
  auto layer = build(input, full);
  Tensor x = Tensor::empty(input.with_batch(full), DType::float64, layout);
  fill_input(x, 31, values);
  Tensor y = Tensor::empty(layer->output_shape().with_batch(full), DType::float64, layout);
  layer->forward(x, y, Mode::eval);
  GuardedTensor part(layer->output_shape().with_batch(batch), DType::float64, layout);
  layer->forward(x.slice_batch(0, batch), part.tensor(), Mode::eval);
  Check c = measured("contract: a partial batch gives the full batch's rows (evaluation)", setting,
                     relative_error(part.tensor(), y.slice_batch(0, batch)), kExact);
  if (const std::string guard = part.check_guards(); !guard.empty()) {
    c.passed = false;
    c.detail += "; it " + guard;
  }
  return c;
}

}  // namespace

std::vector<Check> check_layer(const Registry& registry, const PluginRecord& record,
                               const std::string& case_json) {
  const json c = json::parse(case_json);
  const json params = c.value("params", json::object());
  const json dims = c.value("input", json::array({4, 5, 3}));
  const Shape nhwc = Shape::from(dims.begin(), dims.end());
  const std::int64_t batch = c.value("batch", std::int64_t{2});
  // Inputs: "tokens", ids below it; or uniform in "input_range" [lo, hi] (default [-1, 1]).
  InputValues values;
  values.tokens = c.value("tokens", std::int64_t{0});
  if (c.contains("input_range")) {
    values.lo = c["input_range"].at(0).get<double>();
    values.hi = c["input_range"].at(1).get<double>();
  }
  std::vector<Check> out;
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    const Shape input =
        layout == Layout::nchw && nhwc.rank() == 3 ? Shape{nhwc[2], nhwc[0], nhwc[1]} : nhwc;
    const std::string setting = "params " + params.dump() + ", input " + input.str() +
                                (c.contains("memory") ? ", memory " + c["memory"].dump() : "") +
                                (c.contains("lengths") ? ", lengths " + c["lengths"].dump() : "") +
                                " " + to_string(layout) + ", batch " + std::to_string(batch) +
                                ", float64";
    const SequenceContext sequence = sequence_from(c, batch + 2);  // partial_batch's samples
    const Builder build(registry, record, params, layout, sequence);
    auto layer = build(input, batch);
    const GradientCheck g =
        check_gradients(*layer, input, batch, layout, 7, 1e-6, values, sequence.memory.get());
    out.push_back(measured("gradient check: dx", setting, g.input_error, kGradientTolerance));
    if (!layer->parameters().empty())
      out.push_back(
          measured("gradient check: parameters", setting, g.parameter_error, kGradientTolerance));
    if (sequence.memory)
      out.push_back(
          measured("gradient check: decoder memory", setting, g.memory_error, kGradientTolerance));
    for (Check& k : contracts(*build(input, batch), input, batch, layout, values, setting))
      out.push_back(std::move(k));
    out.push_back(partial_batch(build, input, batch, layout, values, setting));
  }
  return out;
}

}  // namespace dtnn::testing
