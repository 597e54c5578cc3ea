#include "dtnn/testing/device_twin.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "dtnn/conv_options.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/sequence_context.hpp"

namespace dtnn::testing {

Tensor random_tensor(const Shape& shape, DType dtype, std::uint64_t seed) {
  Tensor t = Tensor::empty(shape, dtype, Layout::nchw);
  Rng rng(seed);
  dispatch_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = T(rng.uniform(-1, 1));
  });
  return t;
}

double twin_tolerance(DType dtype) { return dtype == DType::float64 ? 1e-9 : 2e-4; }

double max_relative_difference(const Tensor& a_any, const Tensor& b_any) {
  const Tensor a = a_any.to(Device::cpu), b = b_any.to(Device::cpu);
  DTNN_CHECK(a.numel() == b.numel() && a.dtype() == b.dtype(), "tensors of different sizes");
  double worst = 0;
  dispatch_dtype(a.dtype(), [&](auto z) {
    using T = decltype(z);
    for (std::int64_t i = 0; i < a.numel(); ++i) {
      const double x = a.data<T>()[i], y = b.data<T>()[i];
      worst = std::max(worst, std::isfinite(y) ? std::abs(x - y) / (1 + std::abs(x)) : INFINITY);
    }
  });
  return worst;
}

std::vector<TwinCheck> check_device_twin(const Registry& registry, Device device,
                                         const std::string& type, const Params& params,
                                         const Shape& input, DType dtype, std::int64_t batch,
                                         const TwinInputs& inputs) {
  LayerBuildContext ctx;
  ctx.input_shape = input;
  ctx.dtype = dtype;
  ctx.layout = Layout::nchw;  // the device layers' layout
  ctx.max_batch = batch;
  ctx.seed = 11;
  ctx.registry = &registry;
  if (!inputs.lengths.empty()) {
    DTNN_CHECK(std::int64_t(inputs.lengths.size()) == batch, "one length per sample");
    ctx.extensions.shared<SequenceContext>().lengths->of = inputs.lengths;
  }
  ctx.extensions.set(std::make_shared<ConvOptions>(ConvOptions{"reference", Params()}));
  auto cpu = registry.create_as<Layer>("layer", type, params);
  cpu->build(ctx);
  ctx.device = device;
  const std::string name = type + " on " + to_string(device);
  auto dev = registry.create_as<Layer>("layer", type, params, {}, device);
  dev->build(ctx);

  std::vector<TwinCheck> out;
  auto pc = cpu->parameters(), pd = dev->parameters();
  if (pc.size() != pd.size())
    throw Error(name + " has " + std::to_string(pd.size()) + " parameters, " + type + " has " +
                std::to_string(pc.size()));
  for (std::size_t i = 0; i < pc.size(); ++i)
    out.push_back(
        {"parameters at build: " + pc[i].name, max_relative_difference(pc[i].value, pd[i].value)});

  // Then both twins get the same random parameters: values at their initial ones (batchnorm's
  // gamma of 1, say) would hide a twin that forgets to multiply by them.
  for (std::size_t i = 0; i < pc.size(); ++i) {
    const Tensor values = random_tensor(pc[i].value.shape(), dtype, 100 + i);
    pc[i].value.copy_from(values);
    pd[i].value.copy_from(values);
  }
  const Shape out_shape = cpu->output_shape().with_batch(batch);
  if (!(out_shape == dev->output_shape().with_batch(batch)))
    throw Error(name + " gives " + dev->output_shape().str() + ", " + type + " gives " +
                cpu->output_shape().str());
  Tensor x = random_tensor(input.with_batch(batch), dtype, 1);
  dispatch_dtype(dtype, [&](auto z) {  // [-1, 1) to [lo, hi)
    using T = decltype(z);
    T* p = x.data<T>();
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const double u = (double(p[i]) + 1) / 2;
      const std::int64_t tokens = inputs.tokens;
      p[i] = tokens > 0 ? T(std::min(std::floor(u * double(tokens)), double(tokens - 1)))
                        : T(inputs.lo + (inputs.hi - inputs.lo) * u);
    }
  });
  const Tensor xd = x.to(device);
  Tensor yc = Tensor::empty(out_shape, dtype, Layout::nchw);
  Tensor yd = Tensor::empty(out_shape, dtype, Layout::nchw, device);
  cpu->forward(x, yc, Mode::train);
  dev->forward(xd, yd, Mode::train);
  out.push_back({"forward (train)", max_relative_difference(yc, yd)});

  const Tensor dy = random_tensor(out_shape, dtype, 2);
  Tensor dxc = Tensor::empty(x.shape(), dtype, Layout::nchw);
  Tensor dxd = Tensor::empty(x.shape(), dtype, Layout::nchw, device);
  cpu->backward(x, yc, dy, &dxc);
  dev->backward(xd, yd, dy.to(device), &dxd);
  out.push_back({"input gradient", max_relative_difference(dxc, dxd)});
  for (std::size_t i = 0; i < pc.size(); ++i)
    out.push_back({"gradient of " + pc[i].name, max_relative_difference(pc[i].grad, pd[i].grad)});

  cpu->forward(x, yc, Mode::eval);
  dev->forward(xd, yd, Mode::eval);
  out.push_back({"forward (eval)", max_relative_difference(yc, yd)});
  auto sc = cpu->state(), sd = dev->state();
  if (sc.size() != sd.size()) throw Error(name + " keeps another number of state tensors");
  for (std::size_t i = 0; i < sc.size(); ++i)
    out.push_back({"state " + std::to_string(i), max_relative_difference(sc[i], sd[i])});
  return out;
}

}  // namespace dtnn::testing
