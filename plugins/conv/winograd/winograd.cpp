// winograd: 3x3, stride-1 convolutions through Winograd minimal filtering F(4x4,3x3) or F(2x2,3x3)
// (transforms.hpp), any padding, NHWC and NCHW, float32 and float64. All three passes:
//   forward          y  = correlate(x, w)                     tiles over y
//   backward-data    dx = correlate(dy, rot180(w)^T) with padding 2 - pad (negative: a crop)
//   backward-filter  dw += Gt [ sum over tiles (Bt x B) .* (A dy At) ] G
// The minibatch's tiles are processed in blocks small enough to stay in the last-level cache. For
// a block: (1) every tile of the input goes to the Winograd domain, V[t][p][c] (t: one of a*a
// points, p: tile), read in place where the tile lies inside the image; (2) one GEMM per point,
// M[t] = V[t] U[t]; (3) every tile comes back. Layers of up to 64 channels go in thread blocks,
// each thread taking whole blocks through all three steps; wider ones share each step of a block
// among the threads (the points' GEMMs split between them). The filter transform U[t][c][k] is
// rebuilt on each call (the weights change every step; it costs 1/Ntiles of the GEMMs).
#include <omp.h>

#include <algorithm>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/error.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"
#include "transforms.hpp"

namespace {

using namespace dtnn;
using winograd::kChunk;

// The m x m output tiles covering an h x w output of n samples, numbered sample by sample, row by
// row.
struct TileGrid {
  struct Tile {
    std::int64_t n, y, x;  // sample, output row and column of the tile's first pixel
  };
  TileGrid(std::int64_t m_, std::int64_t n, std::int64_t h, std::int64_t w)
      : m(m_), th((h + m_ - 1) / m_), tw((w + m_ - 1) / m_), count(n * th * tw) {}
  Tile at(std::int64_t p) const { return {p / (th * tw), p / tw % th * m, p % tw * m}; }
  std::int64_t m, th, tw, count;
};

// One activation as the transforms see it.
template <class T>
struct Image {
  T* data;
  ActivationStrides s;
  std::int64_t n, h, w, c;
};

// The channels a transform takes at once: 32, or 16 or 8 where 32 would leave chunks half empty
// (ResNet's 16-channel layers). Runs f.template operator()<W>().
template <class F>
void with_width(std::int64_t channels, F&& f) {
  if (channels % 32 == 0 || (channels > 32 && channels % 16 != 0))
    f.template operator()<32>();
  else if (channels > 8)
    f.template operator()<16>();
  else
    f.template operator()<8>();
}

// Where a tile transform reads or writes: each entry W channel values, in place where the tile's
// memory allows (`strided`), else through a dense [rows][cols][W] buffer (`gather`, `scatter`).

// The rows x cols pixels at (y0, x0) of sample n of an image, channels [c0, c0 + cn). In place
// when the window lies inside the image with W contiguous channels. A gathered copy holds zeros
// outside the image and past cn; a scatter writes only the pixels inside the image.
template <class T, int W>
struct Window {
  const Image<T>& im;
  std::int64_t n, y0, x0, c0, cn;

  T* at(std::int64_t y, std::int64_t x) const {
    return im.data + n * im.s.n + y * im.s.y + x * im.s.x + c0 * im.s.c;
  }
  bool inside(std::int64_t y, std::int64_t x) const {
    return y >= 0 && y < im.h && x >= 0 && x < im.w;
  }
  bool in_place(int rows, int cols) const {
    return cn == W && im.s.c == 1 && inside(y0, x0) && inside(y0 + rows - 1, x0 + cols - 1);
  }
  winograd::Strided<T> strided() const { return {at(y0, x0), im.s.y, im.s.x}; }
  // A window at the image's border, read in place but for the entries outside, which read zeros.
  bool by_table() const { return cn == W && im.s.c == 1; }
  template <int Rows, int Cols>
  winograd::Table<T, Rows, Cols> table() const {
    static constexpr T kZeros[W] = {};
    winograd::Table<T, Rows, Cols> t;
    for (int r = 0; r < Rows; ++r)
      for (int s = 0; s < Cols; ++s)
        t.entry[r * Cols + s] = inside(y0 + r, x0 + s) ? at(y0 + r, x0 + s) : kZeros;
    return t;
  }
  void gather(int rows, int cols, T* d) const {
    for (int r = 0; r < rows; ++r)
      for (int s = 0; s < cols; ++s) {
        T* e = d + (r * cols + s) * W;
        const bool here = inside(y0 + r, x0 + s);
        if (here) copy_strided(at(y0 + r, x0 + s), im.s.c, e, 1, cn);
        std::fill(e + (here ? cn : 0), e + W, T(0));
      }
  }
  void scatter(int rows, int cols, const T* d) const {
    for (int r = 0; r < rows && y0 + r < im.h; ++r)
      for (int s = 0; s < cols && x0 + s < im.w; ++s)
        copy_strided(d + (r * cols + s) * W, 1, at(y0 + r, x0 + s), im.s.c, cn);
  }
};

// The A x A points of one tile in a Winograd-domain block: point t at base + t * stride, channels
// [c0, c0 + cn) of the block's rows (base points at c0). In place when cn == W.
template <class T, int W, int A>
struct Points {
  T* base;
  std::int64_t stride, cn;

  bool in_place(int, int) const { return cn == W; }
  winograd::Strided<T> strided() const { return {base, A * stride, stride}; }
  // (Only for a last chunk narrower than W.)
  void gather(int, int, T* d) const {
    for (int t = 0; t < A * A; ++t) {
      std::copy_n(base + t * stride, cn, d + t * W);
      std::fill(d + t * W + cn, d + (t + 1) * W, T(0));
    }
  }
  void scatter(int, int, const T* d) const {
    for (int t = 0; t < A * A; ++t) std::copy_n(d + t * W, cn, base + t * stride);
  }
};

// transform(in, out) from the InRows x InCols tile `from` to the OutRows x OutCols tile `to`, each
// read or written in place where it allows.
template <class T, int W, int InRows, int InCols, int OutRows, int OutCols, class From, class To,
          class Transform>
void transform_tile(const From& from, const To& to, Transform transform) {
  alignas(64) T out_buffer[OutRows * OutCols * W];
  const bool write_in_place = to.in_place(OutRows, OutCols);
  auto run = [&](auto in) {
    if (write_in_place) return transform(in, to.strided());
    transform(in, winograd::dense<W, OutCols>(+out_buffer));
    to.scatter(OutRows, OutCols, out_buffer);
  };
  if (from.in_place(InRows, InCols)) return run(winograd::Strided<const T>(from.strided()));
  if constexpr (requires { from.by_table(); })
    if (from.by_table()) return run(from.template table<InRows, InCols>());
  alignas(64) T in_buffer[InRows * InCols * W];
  from.gather(InRows, InCols, in_buffer);
  run(winograd::dense<W, InCols>(static_cast<const T*>(in_buffer)));
}

class Winograd final : public ConvAlgorithm {
 public:
  Winograd(const Params& p, const Registry* registry)
      : wanted_tile_(p.get_int("tile")),
        block_bytes_(p.get_int("block_bytes")),
        wanted_thread_block_(p.get_int("thread_block")),
        filter_choice_(p.get_string("backward_filter")),
        registry_(registry) {
    if (wanted_tile_ != 0 && wanted_tile_ != 2 && wanted_tile_ != 4)
      throw Error("conv 'winograd': parameter 'tile' is " + std::to_string(wanted_tile_) +
                  "; expected 2 (F(2x2,3x3)), 4 (F(4x4,3x3)) or 0 (the one with less work)");
    if (block_bytes_ < 1) throw Error("conv 'winograd': parameter 'block_bytes' must be positive");
    if (wanted_thread_block_ < -1)
      throw Error("conv 'winograd': parameter 'thread_block' is " +
                  std::to_string(wanted_thread_block_) +
                  "; expected -1 (auto), 0 (blocks shared by the threads) or tiles per block");
    if (filter_choice_ != "auto" && filter_choice_ != "winograd" &&
        (!registry_ || !registry_->find("conv", filter_choice_) || filter_choice_ == "best_of"))
      throw Error("conv 'winograd': parameter 'backward_filter' is \"" + filter_choice_ +
                  "\"; expected \"auto\", \"winograd\" or an installed conv algorithm");
  }

  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    if (g.kh != 3 || g.kw != 3) {
      why_not = "3x3 filters only";
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
    // Auto: the tile size with fewer Winograd-domain products, points x tiles (F(2x2) on 2x2
    // outputs: 16 x 1 against 36 x 1; F(4x4) from 4x4 up: 36 x 1 against 16 x 4).
    auto work = [&](std::int64_t m) {
      return (m + 2) * (m + 2) * ((g.ho() + m - 1) / m) * ((g.wo() + m - 1) / m);
    };
    tile_ = wanted_tile_ != 0 ? wanted_tile_ : work(2) < work(4) ? 2 : 4;
    const std::int64_t a = tile_ + 2, widest = std::max(g.c, g.k);
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
    block_ = std::min(std::max(block_bytes_ / (2 * widest * size), kMinSharedBlock), tiles);
    threads_ = omp_get_max_threads();
    thread_block_ = wanted_thread_block_;
    if (thread_block_ < 0) {
      thread_block_ = std::min(kThreadBlockBytes / (a * a * (g.c + g.k) * size),
                               (tiles + 2 * threads_ - 1) / (2 * threads_));
      if (thread_block_ < kMinThreadBlock) thread_block_ = 0;
    }
    thread_block_ = std::min(thread_block_, tiles);
    const std::int64_t domain_block =
        a * a *
        std::max(Block{0, 0, block_}.stride(widest),
                 threads_ * Block{0, 0, thread_block_}.stride(widest));
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
    dispatch([&]<class T, int M>() {
      filter_transform<T, M>(w.data<T>(), filter_strides(g_), g_.c, g_.k);
      correlate<T, M>(image<T>(x), image<T>(y), g_.pad_h, g_.pad_w);
    });
  }

  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    // dx[i] = sum_j dy[i + j - (2 - pad)] w[2 - j]: a forward pass over dy with the filter turned
    // by 180 degrees and its channels swapped.
    memory_ = claim_workspace();
    dispatch([&]<class T, int M>() {
      const FilterStrides s = filter_strides(g_);
      const T* turned = w.data<T>() + 2 * s.y + 2 * s.x;
      filter_transform<T, M>(turned, FilterStrides{-s.y, -s.x, s.k, s.c}, g_.k, g_.c);
      correlate<T, M>(image<T>(dy), image<T>(dx), 2 - g_.pad_h, 2 - g_.pad_w);
    });
  }

  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    if (filter_by_) return filter_by_->backward_filter(x, dy, dw);
    memory_ = claim_workspace();
    dispatch(
        [&]<class T, int M>() { filter_gradient<T, M>(image<T>(x), image<T>(dy), dw.data<T>()); });
  }

 private:
  std::int64_t tiles_of(std::int64_t extent) const { return (extent + tile_ - 1) / tile_; }

  // Runs f.template operator()<T, M>() for the dtype and tile size.
  template <class F>
  void dispatch(F&& f) {
    dispatch_dtype(g_.dtype, [&](auto z) {
      using T = decltype(z);
      if (tile_ == 4)
        f.template operator()<T, 4>();
      else
        f.template operator()<T, 2>();
    });
  }

  template <class T>
  Image<T> image(const Tensor& t) const {
    const std::int64_t h = g_.layout == Layout::nhwc ? t.dim(1) : t.dim(2);
    const std::int64_t w = g_.layout == Layout::nhwc ? t.dim(2) : t.dim(3);
    const std::int64_t c = g_.layout == Layout::nhwc ? t.dim(3) : t.dim(1);
    return {const_cast<T*>(t.data<T>()), activation_strides(g_.layout, h, w, c), t.dim(0), h, w, c};
  }

  // The filter slice (G g Gt)[t] for the 3x3 filter g at w with strides s (ci input and co output
  // channels), stored [t][ci][co], or [t][co][ci] (u_transposed_) where ci is the contiguous index
  // in memory (the turned NHWC filter of backward-data). The transform runs on vectors along that
  // contiguous index, reading the filter and writing the slice in place; only a last chunk
  // narrower than kChunk, and NCHW filters (whose contiguous index is the tap), go through a
  // buffer.
  template <class T, int M>
  void filter_transform(const T* w, FilterStrides s, std::int64_t ci, std::int64_t co) {
    constexpr int a = M + 2;
    u_transposed_ = s.k != 1 && s.c == 1;
    // Row i of the slice, vector index j: the filter's element (i, j) at w[i * si + j * sj].
    const std::int64_t ni = u_transposed_ ? co : ci, nj = u_transposed_ ? ci : co;
    const std::int64_t si = u_transposed_ ? s.k : s.c, sj = u_transposed_ ? s.c : s.k;
    T* u_all = part<T>(filter_at_);
    const std::int64_t chunks = (nj + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
    for (std::int64_t job = 0; job < ni * chunks; ++job) {
      const std::int64_t i = job / chunks, j0 = job % chunks * kChunk;
      const std::int64_t jn = std::min<std::int64_t>(kChunk, nj - j0);
      const T* g = w + i * si + j0 * sj;
      const winograd::Strided<T> to{u_all + i * nj + j0, a * ni * nj, ni * nj};
      if (sj == 1 && jn == kChunk) {
        winograd::filter_tile<T, M, kChunk>(winograd::Strided<const T>{g, s.y, s.x}, to);
        continue;
      }
      alignas(64) T gathered[9 * kChunk];
      alignas(64) T u[a * a * kChunk];
      for (int tap = 0; tap < 9; ++tap) {
        T* e = gathered + tap * kChunk;
        for (std::int64_t j = 0; j < jn; ++j) e[j] = g[tap / 3 * s.y + tap % 3 * s.x + j * sj];
        std::fill(e + jn, e + kChunk, T(0));
      }
      winograd::filter_tile<T, M, kChunk>(winograd::dense<kChunk, 3>(+gathered),
                                          winograd::dense<kChunk, a>(+u));
      for (int t = 0; t < a * a; ++t) copy_short(u + t * kChunk, to(t / a, t % a), jn);
    }
  }

  // M[t] = V[t] U[t] for the rows of V at v (row stride ldv), U[t] the filter slice.
  template <class T>
  void point_product(int t, std::int64_t rows, std::int64_t ci, std::int64_t co, const T* v,
                     std::int64_t ldv, T* m, std::int64_t ldm) const {
    const T* u = part<T>(filter_at_) + t * ci * co;
    gemm(false, u_transposed_, rows, co, ci, T(1), v, ldv, u, u_transposed_ ? ci : co, T(0), m,
         ldm);
  }

  // A block of tiles [p0, p0 + count) of a grid in the Winograd domain: point t of tile p, channel
  // c at base[t * stride(channels) + (p - p0) * channels + c], where the block has room for
  // `capacity` tiles. Between one point's rows and the next's there is a cache line beyond the
  // block's tiles, so that the a*a points a tile transform touches do not share cache sets (a
  // block is a power of two bytes on most layers).
  struct Block {
    std::int64_t p0, count, capacity;
    std::int64_t stride(std::int64_t channels) const { return capacity * channels + 16; }
  };

  // Runs job(i) for i in [0, count): on this thread alone, or shared among the threads of the
  // enclosing parallel region, without waiting for them at the end.
  template <class Job>
  static void run_jobs(bool alone, std::int64_t count, Job&& job) {
    if (alone) {
      for (std::int64_t i = 0; i < count; ++i) job(i);
      return;
    }
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < count; ++i) job(i);
  }

  // f.template operator()<W>(tile, row, c0, cn) for every tile of block b (row: its row in the
  // block) and every chunk [c0, c0 + cn) of `channels` channels, W the chunk width (with_width),
  // on this thread alone or shared among the threads (run_jobs).
  template <class F>
  static void for_tile_chunks(const TileGrid& grid, const Block& b, std::int64_t channels,
                              bool alone, F&& f) {
    with_width(channels, [&]<int W>() {
      const std::int64_t chunks = (channels + W - 1) / W;
      run_jobs(alone, b.count * chunks, [&](std::int64_t job) {
        const std::int64_t p = b.p0 + job / chunks, c0 = job % chunks * W;
        f.template operator()<W>(grid.at(p), p - b.p0, c0,
                                 std::min<std::int64_t>(W, channels - c0));
      });
    });
  }

  // The block's tiles of grid, their inputs read from `in` at the tile origin minus the padding,
  // to the Winograd domain in v.
  template <class T, int M>
  static void inputs_to_domain(const Image<T>& in, const TileGrid& grid, const Block& b,
                               std::int64_t pad_h, std::int64_t pad_w, T* v, bool alone) {
    constexpr int a = M + 2;
    for_tile_chunks(
        grid, b, in.c, alone,
        [&]<int W>(const TileGrid::Tile& tile, std::int64_t row, std::int64_t c0, std::int64_t cn) {
          const Window<T, W> from{in, tile.n, tile.y - pad_h, tile.x - pad_w, c0, cn};
          const Points<T, W, a> to{v + row * in.c + c0, b.stride(in.c), cn};
          transform_tile<T, W, a, a, a, a>(
              from, to, [](auto i, auto o) { winograd::input_tile<T, M, W>(i, o); });
        });
  }

  // The block's products in m back to their output tiles in `out`.
  template <class T, int M>
  static void outputs_from_domain(T* m, const TileGrid& grid, const Block& b, const Image<T>& out,
                                  bool alone) {
    constexpr int a = M + 2;
    for_tile_chunks(
        grid, b, out.c, alone,
        [&]<int W>(const TileGrid::Tile& tile, std::int64_t row, std::int64_t k0, std::int64_t kn) {
          const Points<T, W, a> from{m + row * out.c + k0, b.stride(out.c), kn};
          const Window<T, W> to{out, tile.n, tile.y, tile.x, k0, kn};
          transform_tile<T, W, a, a, M, M>(
              from, to, [](auto i, auto o) { winograd::output_tile<T, M, W>(i, o); });
        });
  }

  // The output gradients dy of the block's tiles to the Winograd domain in z.
  template <class T, int M>
  static void gradients_to_domain(const Image<T>& dy, const TileGrid& grid, const Block& b, T* z,
                                  bool alone) {
    constexpr int a = M + 2;
    for_tile_chunks(
        grid, b, dy.c, alone,
        [&]<int W>(const TileGrid::Tile& tile, std::int64_t row, std::int64_t k0, std::int64_t kn) {
          const Window<T, W> from{dy, tile.n, tile.y, tile.x, k0, kn};
          const Points<T, W, a> to{z + row * dy.c + k0, b.stride(dy.c), kn};
          transform_tile<T, W, M, M, a, a>(
              from, to, [](auto i, auto o) { winograd::output_gradient_tile<T, M, W>(i, o); });
        });
  }

  // out = correlate(in, the filter slice) with the given padding (negative: in is cropped); out is
  // tiled. Each block of tiles goes to the Winograd domain (V), through one GEMM per point
  // (M[t] = V[t] U[t]) and back. With thread_block_ set (layers with few channels), each thread
  // takes its own blocks through all three steps alone, V and M small enough to stay in its cache;
  // otherwise the threads share each step of one larger block.
  template <class T, int M>
  void correlate(const Image<T>& in, const Image<T>& out, std::int64_t pad_h, std::int64_t pad_w) {
    constexpr int a = M + 2;
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
          inputs_to_domain<T, M>(in, grid, b, pad_h, pad_w, v, true);
          for (int t = 0; t < a * a; ++t)
            point_product(t, b.count, ci, co, v + t * b.stride(ci), ci, m + t * b.stride(co), co);
          outputs_from_domain<T, M>(m, grid, b, out, true);
        }
      }
      return;
    }
    T* v = part<T>(v_at_);
    T* m = part<T>(m_at_);
#pragma omp parallel
    for (std::int64_t i = 0; i < blocks; ++i) {
      const Block b{i * capacity, std::min(capacity, grid.count - i * capacity), capacity};
      inputs_to_domain<T, M>(in, grid, b, pad_h, pad_w, v, false);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
      for (int t = 0; t < a * a; ++t)
        point_product(t, b.count, ci, co, v + t * b.stride(ci), ci, m + t * b.stride(co), co);
      // (No barrier after: the next block's transforms write v, whose GEMMs are done, and its
      // GEMMs write m only after the barrier that every thread reaches when done here.)
      outputs_from_domain<T, M>(m, grid, b, out, false);
    }
  }

  // dw += the filter gradient, accumulated in the Winograd domain in the filter slice ([t][c][k]).
  // As in correlate, with thread_block_ set each thread takes its own blocks alone (in a fixed
  // round-robin), into an accumulator of its own; the accumulators are summed at the end.
  template <class T, int M>
  void filter_gradient(const Image<T>& x, const Image<T>& dy, T* dw) {
    constexpr int a = M + 2;
    const std::int64_t c = x.c, k = dy.c, points = a * a * c * k;
    const TileGrid grid(M, x.n, dy.h, dy.w);
    const bool alone = thread_block_ > 0;
    const std::int64_t capacity = alone ? thread_block_ : block_;
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
          inputs_to_domain<T, M>(x, grid, b, g_.pad_h, g_.pad_w, v, true);
          gradients_to_domain<T, M>(dy, grid, b, z, true);
          products(b, v, z, into, first);
          first = false;
        }
        if (first) std::fill_n(into, points, T(0));  // this thread had no block
#pragma omp barrier
        const T* others = part<T>(thread_acc_at_);
#pragma omp for schedule(static)
        for (std::int64_t e = 0; e < points; ++e)
          for (int th = 1; th < team; ++th) acc[e] += others[(th - 1) * points + e];
        add_filter_gradient<T, M>(acc, c, k, dw);
      }
      return;
    }
    T* v = part<T>(v_at_);
    T* z = part<T>(m_at_);
#pragma omp parallel
    {
      for (std::int64_t i = 0; i < blocks; ++i) {
        const Block b{i * capacity, std::min(capacity, grid.count - i * capacity), capacity};
        inputs_to_domain<T, M>(x, grid, b, g_.pad_h, g_.pad_w, v, false);
        gradients_to_domain<T, M>(dy, grid, b, z, false);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < a * a; ++t)
          gemm(true, false, c, k, b.count, T(1), v + t * b.stride(c), c, z + t * b.stride(k), k,
               i == 0 ? T(0) : T(1), acc + t * c * k, k);
      }
      add_filter_gradient<T, M>(acc, c, k, dw);
    }
  }

  // dw += Gt acc G, acc the gradient in the Winograd domain ([t][c][k]). Shares its loop among the
  // threads of the enclosing parallel region.
  template <class T, int M>
  void add_filter_gradient(const T* acc, std::int64_t c, std::int64_t k, T* dw) const {
    constexpr int a = M + 2;
    const std::int64_t chunks = (k + kChunk - 1) / kChunk;
    const FilterStrides fs = filter_strides(g_);
#pragma omp for schedule(static)
    for (std::int64_t job = 0; job < c * chunks; ++job) {
      const std::int64_t ch = job / chunks, k0 = job % chunks * kChunk;
      const std::int64_t kn = std::min<std::int64_t>(kChunk, k - k0);
      const winograd::Strided<const T> from{acc + ch * k + k0, a * c * k, c * k};
      alignas(64) T du[a * a * kChunk];
      alignas(64) T dg[9 * kChunk];
      if (kn == kChunk) {
        winograd::filter_gradient_tile<T, M, kChunk>(from, winograd::dense<kChunk, 3>(+dg));
      } else {
        for (int t = 0; t < a * a; ++t) {
          copy_short(from(t / a, t % a), du + t * kChunk, kn);
          std::fill(du + t * kChunk + kn, du + (t + 1) * kChunk, T(0));
        }
        winograd::filter_gradient_tile<T, M, kChunk>(winograd::dense<kChunk, a>(+du),
                                                     winograd::dense<kChunk, 3>(+dg));
      }
      for (int tap = 0; tap < 9; ++tap) {
        T* dst = dw + tap / 3 * fs.y + tap % 3 * fs.x + ch * fs.c + k0 * fs.k;
        const T* src = dg + tap * kChunk;
        if (fs.k == 1)
          for (std::int64_t j = 0; j < kn; ++j) dst[j] += src[j];
        else
          for (std::int64_t j = 0; j < kn; ++j) dst[j * fs.k] += src[j];
      }
    }
  }

  static constexpr std::int64_t kMinSharedBlock = 64;         // tiles
  static constexpr std::int64_t kThreadBlockBytes = 2 << 20;  // one thread's block, V and M
  static constexpr std::int64_t kMinThreadBlock = 64;         // tiles: fewer make GEMMs too short
  std::int64_t wanted_tile_, block_bytes_, wanted_thread_block_;
  std::int64_t tile_ = 4;
  ConvGeometry g_;
  std::int64_t block_ = 0;         // tiles per block shared by the threads
  std::int64_t thread_block_ = 0;  // tiles per block of one thread alone; 0: blocks are shared
  int threads_ = 1;                // the threads of a pass (each with its own blocks)
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
  std::byte* memory_ = nullptr;               // the workspace memory of the current pass
};

Plugin* create(const Params& p, const PluginContext& ctx) { return new Winograd(p, ctx.registry); }

}  // namespace

DTNN_PLUGIN(
    "conv", "winograd",
    "Winograd F(4x4,3x3) or F(2x2,3x3) (tile 4, 2, 0: auto) for 3x3 stride-1 layers, all passes",
    R"({"tile": 0, "block_bytes": 131072, "thread_block": -1, "backward_filter": "auto"})", create)
