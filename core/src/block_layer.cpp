#include "dtnn/block_layer.hpp"

#include <nlohmann/json.hpp>

#include "dtnn/error.hpp"
#include "dtnn/model_spec.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/pydtnn_arrays.hpp"
#include "dtnn/rng.hpp"

namespace dtnn {

void BlockLayer::accumulate(Tensor& a, const Tensor& b) const {
  if (a.device() != Device::cpu || b.device() != Device::cpu)
    throw Error(type() + " on " + to_string(a.device()) +
                ": the paths' input gradients are summed on the host unless the block overrides "
                "accumulate");
  dispatch_dtype(a.dtype(), [&](auto z) {
    using T = decltype(z);
    T* const ap = a.data<T>();
    const T* const bp = b.data<T>();
    parallel_chunks(a.numel(), kParallelGrain, [&](std::int64_t begin, std::int64_t end) {
      T* __restrict into = ap;
      const T* __restrict from = bp;
      for (std::int64_t i = begin; i < end; ++i) into[i] += from[i];
    });
  });
}

BlockLayer::BlockLayer(const Params& params) : params_(params) {}
BlockLayer::~BlockLayer() = default;

void BlockLayer::build(const LayerBuildContext& ctx) {
  const nlohmann::json& j = params_.json();
  const auto it = j.find("paths");
  if (it == j.end() || !it->is_array() || it->empty())
    params_.fail("paths", "a non-empty list of paths, each a list of layers ([] for identity)");
  layout_ = ctx.layout;
  buffers_ = ctx.gradient_buffers;
  if (!buffers_) {
    own_buffers_ = std::make_unique<GradientBuffers>();
    buffers_ = own_buffers_.get();
  }
  level_ = ctx.chain_level;
  paths_.resize(it->size());
  last_first_ = ctx.saved_activations == Precision::bf16 && !backward_reads_path_outputs();
  // Of the paths after the first, the last one with layers may write its output into y.
  std::size_t host = 0;
  if (last_first_ && merges_into_a_path_output())
    for (std::size_t p = it->size(); p-- > 1 && host == 0;)
      if (!(*it)[p].empty()) host = p;
  for (std::size_t p = 0; p < it->size(); ++p) {
    const std::string where = params_.key_path("paths") + "[" + std::to_string(p) + "]";
    const std::vector<LayerSpec> specs = parse_layer_list((*it)[p], where);
    LayerBuildContext c = ctx;
    c.seed = Rng::derive(ctx.seed, 1000 + p);
    c.gradient_buffers = buffers_;
    // Run last, the first path's output is merged before any other chain of its level runs.
    paths_[p].build(specs, c,
                    {.output_in_level_buffers = last_first_ && p == 0,
                     .output_in_callers_memory = p > 0 && p == host});
    if (paths_[p].writes_into_callers_memory()) in_output_ = p;
    path_shapes_.push_back(paths_[p].output_shape());
  }
  output_shape_ = merged_shape(path_shapes_);
  using Slot = GradientBuffers::Slot;
  if (shares_need_buffers())
    for (const Shape& s : path_shapes_)
      buffers_->reserve(level_, Slot::share, ctx.max_batch * s.numel(), ctx.dtype, ctx.device);
  if (ctx.needs_input_gradient && paths_.size() > 1)
    buffers_->reserve(level_, Slot::scratch, ctx.max_batch * ctx.input_shape.numel(), ctx.dtype,
                      ctx.device);
  outputs_.resize(paths_.size());
}

void BlockLayer::forward(const Tensor& x, Tensor& y, Mode mode) {
  if (last_first_)
    for (std::size_t p = paths_.size(); p-- > 0;)
      outputs_[p] = p > 0 && p == in_output_ ? &paths_[p].forward_into(x, y, mode)
                                             : &paths_[p].forward(x, mode);
  else
    for (std::size_t p = 0; p < paths_.size(); ++p) outputs_[p] = &paths_[p].forward(x, mode);
  merge(outputs_, y);
}

void BlockLayer::backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) {
  const std::int64_t batch = dy.dim(0);
  using Slot = GradientBuffers::Slot;
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    // Path p's share, then its input gradient (for p > 0) in this level's buffers: paths run
    // backward one after another, and a nested block's paths use the next level's.
    Tensor buffer =
        shares_need_buffers()
            ? buffers_->view(level_, Slot::share, path_shapes_[p].with_batch(batch), layout_)
            : Tensor();
    const Tensor& dy_p = share(dy, p, buffer);
    if (!dx) {
      if (!paths_[p].empty()) paths_[p].backward_from(x, dy_p, nullptr);
      continue;
    }
    if (paths_[p].empty()) {  // an identity path: its input gradient is its share of dy
      if (p == 0)
        dx->copy_from(dy_p);
      else
        accumulate(*dx, dy_p);
      continue;
    }
    // The first path writes dx; the others write the scratch, added to it.
    Tensor target = p == 0 ? *dx : buffers_->view(level_, Slot::scratch, dx->shape(), dx->layout());
    paths_[p].backward_from(x, dy_p, &target);
    if (p > 0) accumulate(*dx, target);
  }
}

std::vector<Parameter> BlockLayer::parameters() {
  std::vector<Parameter> all;
  for (std::size_t p = 0; p < paths_.size(); ++p)
    for (auto& param : paths_[p].parameters()) {
      param.name = "path" + std::to_string(p) + "." + param.name;
      all.push_back(std::move(param));
    }
  return all;
}

std::vector<std::pair<std::string, Layer*>> BlockLayer::inner_layers() {
  std::vector<std::pair<std::string, Layer*>> all;
  for (std::size_t p = 0; p < paths_.size(); ++p)
    for (std::size_t i = 0; i < paths_[p].size(); ++i)
      all.emplace_back("path" + std::to_string(p) + "." + std::to_string(i), &paths_[p].layer(i));
  return all;
}

std::vector<Tensor> BlockLayer::state() {
  std::vector<Tensor> all;
  for (auto& path : paths_)
    for (auto& t : path.state()) all.push_back(std::move(t));
  return all;
}

std::string BlockLayer::attributes() const {
  std::string s = "paths=(";
  for (std::size_t p = 0; p < paths_.size(); ++p)
    s += (p ? "," : "") + (paths_[p].empty() ? std::string("identity")
                                             : std::to_string(paths_[p].size()) + " layers");
  return s + ")";
}

std::size_t BlockLayer::workspace_bytes() const {
  std::size_t bytes = 0;
  for (const auto& path : paths_) bytes = std::max(bytes, path.workspace_bytes());
  return bytes;
}

std::size_t BlockLayer::inner_activation_bytes() const {
  std::size_t bytes = own_buffers_ ? own_buffers_->bytes() + own_buffers_->forward_bytes() : 0;
  for (const auto& path : paths_) bytes += path.activation_bytes();  // the paths use buffers_
  return bytes;
}

std::string BlockLayer::report() const {
  std::string all;
  for (const auto& path : paths_) {
    const std::string r = path.report();
    if (!r.empty()) all += (all.empty() ? "" : "\n") + r;
  }
  return all;
}

void BlockLayer::pydtnn_arrays(PydtnnArrays& out, const Shape& input) {
  out.layer(type());
  for (LayerChain& chain : paths_)
    out.walk(
        chain.size(), [&](std::size_t j) -> Layer& { return chain.layer(j); }, input);
}

}  // namespace dtnn
