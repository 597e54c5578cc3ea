// winograd: stride-1 convolutions through Winograd minimal filtering (transforms.hpp): 3x3 filters
// by F(4x4,3x3) or F(2x2,3x3), 2x2 by F(3x3,2x2), 5x5 by F(2x2,5x5); any padding, NHWC and NCHW,
// float32 and float64. All three passes, r the filter's size:
//   forward          y  = correlate(x, w)                     tiles over y
//   backward-data    dx = correlate(dy, rot180(w)^T) with padding r - 1 - pad (negative: a crop)
//   backward-filter  dw += Gt [ sum over tiles (Bt x B) .* (A dy At) ] G
// The minibatch's tiles are processed in blocks small enough to stay in the last-level cache. For
// a block: (1) every tile of the input goes to the Winograd domain, V[t][p][c] (t: one of a*a
// points, p: tile), read in place where the tile lies inside the image; (2) one GEMM per point,
// M[t] = V[t] U[t]; (3) every tile comes back. Layers of up to 64 channels go in thread blocks,
// each thread taking whole blocks through all three steps; wider ones share each step of a block
// among the threads (the points' GEMMs split between them). The filter transform U[t] is rebuilt
// on each call (the weights change every step; it costs 1/Ntiles of the GEMMs). This file runs
// the passes and the GEMMs (BLIS); the transforms are domain.hpp's, compiled in kernels.cpp. The
// plugin is built once per instruction-set level and the registry loads the best this CPU runs.
#include <omp.h>

#include <algorithm>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/error.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using winograd::Block;
using winograd::Image;
using winograd::TileGrid;

class Winograd final : public ConvAlgorithm {
 public:
  Winograd(const Params& p, const Registry* registry)
      : wanted_tile_(p.get_int("tile")),
        block_bytes_(p.get_int("block_bytes")),
        filter_block_bytes_(p.get_int("filter_block_bytes")),
        wanted_thread_block_(p.get_int("thread_block")),
        wanted_filter_thread_block_(p.get_int("filter_thread_block")),
        filter_choice_(p.get_string("backward_filter")),
        registry_(registry),
        kernels_(&winograd::kernel_set()) {
    if (wanted_tile_ != 0 && wanted_tile_ != 2 && wanted_tile_ != 4)
      throw Error("conv 'winograd': parameter 'tile' is " + std::to_string(wanted_tile_) +
                  "; expected 2 (F(2x2,3x3)), 4 (F(4x4,3x3)) or 0 (the one with less work) for "
                  "3x3 layers");
    if (block_bytes_ < 1 || filter_block_bytes_ < 1)
      throw Error(
          "conv 'winograd': parameters 'block_bytes' and 'filter_block_bytes' must be "
          "positive");
    if (wanted_thread_block_ < -1)
      throw Error("conv 'winograd': parameter 'thread_block' is " +
                  std::to_string(wanted_thread_block_) +
                  "; expected -1 (auto), 0 (blocks shared by the threads) or tiles per block");
    if (wanted_filter_thread_block_ < -1 || wanted_filter_thread_block_ == 0)
      throw Error("conv 'winograd': parameter 'filter_thread_block' is " +
                  std::to_string(wanted_filter_thread_block_) +
                  "; expected -1 (auto) or tiles per block");
    if (filter_choice_ != "auto" && filter_choice_ != "winograd" &&
        (!registry_ || !registry_->find("conv", filter_choice_) || filter_choice_ == "best_of"))
      throw Error("conv 'winograd': parameter 'backward_filter' is \"" + filter_choice_ +
                  "\"; expected \"auto\", \"winograd\" or an installed conv algorithm");
  }

  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    if (g.groups != 1) {
      why_not = "no grouped convolutions";
      return false;
    }
    if (g.kh != g.kw || (g.kh != 2 && g.kh != 3 && g.kh != 5)) {
      why_not = "2x2, 3x3 or 5x5 filters only";
      return false;
    }
    if (g.stride_h != 1 || g.stride_w != 1) {
      why_not = "stride 1 only";
      return false;
    }
    if (g.dilation_h != 1 || g.dilation_w != 1) {
      why_not = "no dilation";
      return false;
    }
    return true;
  }

  void prepare(const ConvGeometry& g) override {
    g_ = g;
    // Backward-filter: in the Winograd domain, or (where that loses) by another algorithm. Auto:
    // i2c below 16 input channels, where the transforms cost more than the products they save
    // (bench/conv_bench: twice i2c's time on 3-channel layers), winograd from 16 on.
    std::string by = filter_choice_ == "auto" ? (g.c < 16 ? "i2c" : "winograd") : filter_choice_;
    filter_by_.reset();
    if (by != "winograd") {
      filter_by_ = registry_->create_as<ConvAlgorithm>("conv", by, Params());
      std::string why;
      if (!filter_by_->supports(g, ConvPass::backward_filter, why))
        throw Error("conv 'winograd': backward_filter '" + by + "' cannot compute " + g.str() +
                    ": " + why);
      filter_by_->set_workspace(&workspace());
      filter_by_->prepare(g);
    }
    // 3x3, auto: the tile size with fewer Winograd-domain products, points x tiles (F(2x2) on 2x2
    // outputs: 16 x 1 against 36 x 1; F(4x4) from 4x4 up: 36 x 1 against 16 x 4). 2x2 and 5x5
    // filters have one tile each, F(3x3,2x2) and F(2x2,5x5) (larger ones lose accuracy fast).
    r_ = g.kh;
    auto work = [&](std::int64_t m) {
      return (m + 2) * (m + 2) * ((g.ho() + m - 1) / m) * ((g.wo() + m - 1) / m);
    };
    if (r_ == 3)
      tile_ = wanted_tile_ != 0 ? wanted_tile_ : work(2) < work(4) ? 2 : 4;
    else
      tile_ = r_ == 2 ? 3 : 2;
    const std::int64_t a = tile_ + r_ - 1, widest = std::max(g.c, g.k);
    // The most tiles any pass has: forward tiles y, backward-data tiles dx (as large as x).
    const std::int64_t tiles =
        g.n * std::max(tiles_of(g.ho()) * tiles_of(g.wo()), tiles_of(g.h) * tiles_of(g.w));
    const std::int64_t size = static_cast<std::int64_t>(dtype_size(g.dtype));
    // block_bytes bounds one point's share of a shared block (its V and M rows), what one GEMM
    // streams, but a block has at least kMinSharedBlock tiles: each GEMM packs its point's whole
    // filter slice (1 MiB on 512-channel layers) for the block's rows. Thread blocks: each thread
    // takes whole blocks through every step alone, the blocks handed out dynamically, with no
    // barrier until the pass ends. As fast as shared blocks on an idle machine, and up to 3x faster
    // when another process takes part of a core, which a barrier makes every thread wait for. Auto:
    // blocks of at most kThreadBlockBytes (V and M) and at least two per thread, where that is at
    // least kMinThreadBlock tiles (layers of up to 64 channels); shared blocks elsewhere, where one
    // point's GEMM is large enough to split.
    // Backward-filter has its own bounds: its products are as deep as the block's tiles, summed
    // into one accumulator of a*a*C*K values. Shared blocks take filter_block_bytes, smaller than
    // block_bytes (each point's product is split among the threads, and shorter ones ran faster).
    // Thread blocks take up to kFilterThreadBlockBytes, as many blocks for each thread (they go
    // round-robin): each block reads and writes the thread's whole accumulator, which on
    // 64-channel layers is half as large as a 2 MiB block (docs/benchmarks.md).
    auto shared_block = [&](std::int64_t bytes) {
      return std::min(std::max(bytes / (2 * widest * size), kMinSharedBlock), tiles);
    };
    block_ = shared_block(block_bytes_);
    filter_block_ = shared_block(filter_block_bytes_);
    threads_ = omp_get_max_threads();
    thread_block_ = wanted_thread_block_;
    if (thread_block_ < 0) {
      thread_block_ = std::min(kThreadBlockBytes / (a * a * (g.c + g.k) * size),
                               (tiles + 2 * threads_ - 1) / (2 * threads_));
      if (thread_block_ < kMinThreadBlock) thread_block_ = 0;
    }
    thread_block_ = std::min(thread_block_, tiles);
    filter_thread_block_ = 0;
    if (thread_block_ > 0) {
      filter_thread_block_ = wanted_filter_thread_block_;
      if (filter_thread_block_ < 0)
        filter_thread_block_ = equal_blocks(
            g.n * tiles_of(g.ho()) * tiles_of(g.wo()),
            std::max<std::int64_t>(1, kFilterThreadBlockBytes / (a * a * (g.c + g.k) * size)));
      filter_thread_block_ = std::min(filter_thread_block_, tiles);
    }
    const std::int64_t domain_block =
        a * a *
        std::max(
            Block{0, 0, std::max(block_, filter_block_)}.stride(widest),
            threads_ * Block{0, 0, std::max(thread_block_, filter_thread_block_)}.stride(widest));
    WorkspaceSlices slices;
    filter_at_ = slices.add<std::byte>(a * a * g.c * g.k * size);
    v_at_ = slices.add<std::byte>(domain_block * size);
    m_at_ = slices.add<std::byte>(domain_block * size);
    // Backward-filter with thread blocks: the other threads' accumulators.
    thread_acc_at_ =
        slices.add<std::byte>((thread_block_ > 0 ? threads_ - 1 : 0) * a * a * g.c * g.k * size);
    workspace_bytes_ = slices.bytes();
    workspace().reserve(workspace_bytes_);
  }

  std::size_t workspace_bytes() const override {
    return std::max(workspace_bytes_, filter_by_ ? filter_by_->workspace_bytes() : 0);
  }
  std::string name() const override {
    return filter_by_ ? "winograd(backward-filter: " + filter_by_->name() + ")" : "winograd";
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    memory_ = claim_workspace();
    dispatch([&]<class T, int M, int R>() {
      transform_filter<T, M, R>(w.data<T>(), filter_strides(g_), g_.c, g_.k);
      correlate<T, M, R>(image<T>(x), image<T>(y), g_.pad_h, g_.pad_w);
    });
  }

  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    // dx[i] = sum_j dy[i + j - (r - 1 - pad)] w[r - 1 - j]: a forward pass over dy with the
    // filter turned by 180 degrees and its channels swapped.
    memory_ = claim_workspace();
    dispatch([&]<class T, int M, int R>() {
      const FilterStrides s = filter_strides(g_);
      const T* turned = w.data<T>() + (R - 1) * s.y + (R - 1) * s.x;
      transform_filter<T, M, R>(turned, FilterStrides{-s.y, -s.x, s.k, s.c}, g_.k, g_.c);
      correlate<T, M, R>(image<T>(dy), image<T>(dx), R - 1 - g_.pad_h, R - 1 - g_.pad_w);
    });
  }

  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    if (filter_by_) return filter_by_->backward_filter(x, dy, dw);
    memory_ = claim_workspace();
    dispatch([&]<class T, int M, int R>() {
      filter_gradient<T, M, R>(image<T>(x), image<T>(dy), dw.data<T>());
    });
  }

 private:
  std::int64_t tiles_of(std::int64_t extent) const { return (extent + tile_ - 1) / tile_; }
  // Tiles per block for `tiles` in blocks of at most `bound`, as many blocks for each thread.
  std::int64_t equal_blocks(std::int64_t tiles, std::int64_t bound) const {
    std::int64_t blocks = (tiles + bound - 1) / bound;
    blocks = (blocks + threads_ - 1) / threads_ * threads_;
    return (tiles + blocks - 1) / blocks;
  }

  // Runs f.template operator()<T, M, R>() for the dtype, tile size and filter size.
  template <class F>
  void dispatch(F&& f) {
    dispatch_dtype(g_.dtype, [&](auto z) {
      using T = decltype(z);
      if (r_ == 2)
        f.template operator()<T, 3, 2>();
      else if (r_ == 5)
        f.template operator()<T, 2, 5>();
      else if (tile_ == 4)
        f.template operator()<T, 4, 3>();
      else
        f.template operator()<T, 2, 3>();
    });
  }

  template <class T>
  Image<T> image(const Tensor& t) const {
    const std::int64_t h = g_.layout == Layout::nhwc ? t.dim(1) : t.dim(2);
    const std::int64_t w = g_.layout == Layout::nhwc ? t.dim(2) : t.dim(3);
    const std::int64_t c = g_.layout == Layout::nhwc ? t.dim(3) : t.dim(1);
    return {const_cast<T*>(t.data<T>()), activation_strides(g_.layout, h, w, c), t.dim(0), h, w, c};
  }

  // The filter slice for the filter at w (strides s): [t][ci][co], or [t][co][ci] where ci is the
  // contiguous index (backward-data's turned NHWC filter), which the GEMMs take transposed.
  template <class T, int M, int R>
  void transform_filter(const T* w, FilterStrides s, std::int64_t ci, std::int64_t co) {
    u_transposed_ = s.k != 1 && s.c == 1;
    kernels_->get<T, M, R>().filter_transform(w, s, ci, co, part<T>(filter_at_), u_transposed_);
  }

  // M[t] = V[t] U[t] for the rows of V at v (row stride ldv), U[t] the filter slice.
  template <class T>
  void point_product(int t, std::int64_t rows, std::int64_t ci, std::int64_t co, const T* v,
                     std::int64_t ldv, T* m, std::int64_t ldm) const {
    const T* u = part<T>(filter_at_) + t * ci * co;
    gemm(false, u_transposed_, rows, co, ci, T(1), v, ldv, u, u_transposed_ ? ci : co, T(0), m,
         ldm);
  }

  // out = correlate(in, the filter slice) with the given padding (negative: in is cropped); out is
  // tiled. Each block of tiles goes to the Winograd domain (V), through one GEMM per point
  // (M[t] = V[t] U[t]) and back. With thread_block_ set (layers with few channels), each thread
  // takes its own blocks through all three steps alone, V and M small enough to stay in its cache;
  // otherwise the threads share each step of one larger block.
  template <class T, int M, int R>
  void correlate(const Image<T>& in, const Image<T>& out, std::int64_t pad_h, std::int64_t pad_w) {
    constexpr int a = M + R - 1;
    const winograd::Kernels<T, M, R>& ops = kernels_->get<T, M, R>();
    const std::int64_t ci = in.c, co = out.c;
    const TileGrid grid(M, in.n, out.h, out.w);
    const bool alone = thread_block_ > 0;
    const std::int64_t capacity = alone ? thread_block_ : block_;
    const std::int64_t blocks = (grid.count + capacity - 1) / capacity;
    if (alone) {
#pragma omp parallel num_threads(threads_)
      {
        const std::int64_t mine =
            omp_get_thread_num() * a * a * Block{0, 0, capacity}.stride(std::max(ci, co));
        T* v = part<T>(v_at_) + mine;
        T* m = part<T>(m_at_) + mine;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t i = 0; i < blocks; ++i) {
          const Block b{i * capacity, std::min(capacity, grid.count - i * capacity), capacity};
          ops.inputs_to_domain(in, grid, b, pad_h, pad_w, v, true);
          for (int t = 0; t < a * a; ++t)
            point_product(t, b.count, ci, co, v + t * b.stride(ci), ci, m + t * b.stride(co), co);
          ops.outputs_from_domain(m, grid, b, out, true);
        }
      }
      return;
    }
    T* v = part<T>(v_at_);
    T* m = part<T>(m_at_);
#pragma omp parallel
    for (std::int64_t i = 0; i < blocks; ++i) {
      const Block b{i * capacity, std::min(capacity, grid.count - i * capacity), capacity};
      ops.inputs_to_domain(in, grid, b, pad_h, pad_w, v, false);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
      for (int t = 0; t < a * a; ++t)
        point_product(t, b.count, ci, co, v + t * b.stride(ci), ci, m + t * b.stride(co), co);
      // (No barrier after: the next block's transforms write v, whose GEMMs are done, and its
      // GEMMs write m only after the barrier that every thread reaches when done here.)
      ops.outputs_from_domain(m, grid, b, out, false);
    }
  }

  // dw += the filter gradient, accumulated in the Winograd domain in the filter slice ([t][c][k]).
  // As in correlate, with thread_block_ set each thread takes its own blocks alone (in a fixed
  // round-robin), into an accumulator of its own; the accumulators are summed at the end.
  template <class T, int M, int R>
  void filter_gradient(const Image<T>& x, const Image<T>& dy, T* dw) {
    constexpr int a = M + R - 1;
    const winograd::Kernels<T, M, R>& ops = kernels_->get<T, M, R>();
    const std::int64_t c = x.c, k = dy.c, points = a * a * c * k;
    const TileGrid grid(M, x.n, dy.h, dy.w);
    const bool alone = thread_block_ > 0;
    const std::int64_t capacity = alone ? filter_thread_block_ : filter_block_;
    const std::int64_t blocks = (grid.count + capacity - 1) / capacity;
    T* acc = part<T>(filter_at_);
    auto products = [&](const Block& b, const T* v, const T* z, T* into, bool first) {
      for (int t = 0; t < a * a; ++t)
        gemm(true, false, c, k, b.count, T(1), v + t * b.stride(c), c, z + t * b.stride(k), k,
             first ? T(0) : T(1), into + t * c * k, k);
    };
    if (alone) {
#pragma omp parallel num_threads(threads_)
      {
        const int me = omp_get_thread_num(), team = omp_get_num_threads();
        const std::int64_t mine = me * a * a * Block{0, 0, capacity}.stride(std::max(c, k));
        T* v = part<T>(v_at_) + mine;
        T* z = part<T>(m_at_) + mine;
        T* into = me == 0 ? acc : part<T>(thread_acc_at_) + (me - 1) * points;
        bool first = true;
        // The same blocks to the same thread on every call (not as threads come free), so that
        // the per-thread sums, and so dw, do not vary from run to run.
#pragma omp for schedule(static, 1)
        for (std::int64_t i = 0; i < blocks; ++i) {
          const Block b{i * capacity, std::min(capacity, grid.count - i * capacity), capacity};
          ops.inputs_to_domain(x, grid, b, g_.pad_h, g_.pad_w, v, true);
          ops.gradients_to_domain(dy, grid, b, z, true);
          products(b, v, z, into, first);
          first = false;
        }
        if (first) std::fill_n(into, points, T(0));  // this thread had no block
#pragma omp barrier
        const T* others = part<T>(thread_acc_at_);
#pragma omp for schedule(static)
        for (std::int64_t e = 0; e < points; ++e)
          for (int th = 1; th < team; ++th) acc[e] += others[(th - 1) * points + e];
        ops.add_filter_gradient(acc, c, k, filter_strides(g_), dw);
      }
      return;
    }
    T* v = part<T>(v_at_);
    T* z = part<T>(m_at_);
#pragma omp parallel
    {
      for (std::int64_t i = 0; i < blocks; ++i) {
        const Block b{i * capacity, std::min(capacity, grid.count - i * capacity), capacity};
        ops.inputs_to_domain(x, grid, b, g_.pad_h, g_.pad_w, v, false);
        ops.gradients_to_domain(dy, grid, b, z, false);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < a * a; ++t)
          gemm(true, false, c, k, b.count, T(1), v + t * b.stride(c), c, z + t * b.stride(k), k,
               i == 0 ? T(0) : T(1), acc + t * c * k, k);
      }
      ops.add_filter_gradient(acc, c, k, filter_strides(g_), dw);
    }
  }

  static constexpr std::int64_t kMinSharedBlock = 64;         // tiles
  static constexpr std::int64_t kThreadBlockBytes = 2 << 20;  // one thread's block, V and M
  static constexpr std::int64_t kMinThreadBlock = 64;         // tiles: fewer make GEMMs too short
  static constexpr std::int64_t kFilterThreadBlockBytes = 4 << 20;  // the same in backward-filter
  std::int64_t wanted_tile_, block_bytes_, filter_block_bytes_, wanted_thread_block_,
      wanted_filter_thread_block_;
  std::int64_t tile_ = 4;  // M, the output tile's side
  std::int64_t r_ = 3;     // R, the filter's side
  ConvGeometry g_;
  std::int64_t block_ = 0;         // tiles per block shared by the threads
  std::int64_t filter_block_ = 0;  // the same in backward-filter
  std::int64_t thread_block_ = 0;  // tiles per block of one thread alone; 0: blocks are shared
  std::int64_t filter_thread_block_ = 0;  // the same in backward-filter
  int threads_ = 1;                       // the threads of a pass (each with its own blocks)
  // Slices of the workspace: the filter in the Winograd domain [t][c][k] (backward-filter: the
  // gradient accumulated there), one block of input tiles V and of products M.
  template <class T>
  T* part(std::size_t at) const {
    return slice<T>(memory_, at);
  }
  bool u_transposed_ = false;  // the filter slice is [t][co][ci] (filter_transform)
  std::size_t filter_at_ = 0, v_at_ = 0, m_at_ = 0, thread_acc_at_ = 0, workspace_bytes_ = 0;
  std::string filter_choice_;  // the backward_filter parameter
  const Registry* registry_;
  std::shared_ptr<ConvAlgorithm> filter_by_;  // backward-filter's algorithm, when not winograd
  const winograd::KernelSet* kernels_;        // the transforms (kernels.cpp)
  std::byte* memory_ = nullptr;               // the workspace memory of the current pass
};

Plugin* create(const Params& p, const PluginContext& ctx) { return new Winograd(p, ctx.registry); }

}  // namespace

// Conformance (dtnn/testing/plugin_conformance.hpp) at each tile, both ways of running blocks
// (threads sharing each block, or a block per thread) and its own backward-filter.
DTNN_EXPORT_PLUGIN(
        .kind = "conv", .name = "winograd",
        .description =
            "Winograd F(4x4,3x3) or F(2x2,3x3) (tile 4, 2, 0: auto), F(3x3,2x2) and "
            "F(2x2,5x5) for 3x3, 2x2 and 5x5 stride-1 layers, all passes",
        .parameters =
            R"({"tile": 0, "block_bytes": 524288, "filter_block_bytes": 131072, "thread_block": -1,
               "filter_thread_block": -1, "backward_filter": "auto"})",
        .traits = R"({"conformance": [
        {"params": {}},
        {"params": {"tile": 2, "thread_block": 0, "backward_filter": "winograd"}},
        {"params": {"tile": 4, "thread_block": 8, "filter_thread_block": 13,
                    "backward_filter": "winograd"}}]})",
        .factory = create)
