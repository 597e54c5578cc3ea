// The Winograd-domain kernels of the winograd plugin: the tile transforms between an activation and
// a block of the Winograd domain, and the filter transforms (transforms.hpp does the arithmetic).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels.hpp"
#include "transforms.hpp"

namespace dtnn::winograd {

// dst[0, count) = value.
template <class T>
inline void fill(T* dst, std::int64_t count, T value) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = value;
}

// The channels a transform takes at once: 32, or 16 or 8 where 32 would leave chunks half empty
// (ResNet's 16-channel layers); doubles always 16 (float64 runs are for checking, and one width
// instead of three cuts this file's compile time by a quarter). Runs f.template operator()<W>().
template <class T, class F>
void with_width(std::int64_t channels, F&& f) {
  if constexpr (std::is_same_v<T, double>) {
    f.template operator()<16>();
    return;
  }
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
  Strided<T> strided() const { return {at(y0, x0), im.s.y, im.s.x}; }
  // A window at the image's border, read in place but for the entries outside, which read zeros.
  bool by_table() const { return cn == W && im.s.c == 1; }
  template <int Rows, int Cols>
  Table<T, Rows, Cols> table() const {
    static constexpr T kZeros[W] = {};
    Table<T, Rows, Cols> t;
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
        fill(e + (here ? cn : 0), W - (here ? cn : 0), T(0));
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
  Strided<T> strided() const { return {base, A * stride, stride}; }
  // (Only for a last chunk narrower than W.)
  void gather(int, int, T* d) const {
    for (int t = 0; t < A * A; ++t) {
      copy_short(base + t * stride, d + t * W, cn);
      fill(d + t * W + cn, W - cn, T(0));
    }
  }
  void scatter(int, int, const T* d) const {
    for (int t = 0; t < A * A; ++t) copy_short(d + t * W, base + t * stride, cn);
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
    transform(in, dense<W, OutCols>(+out_buffer));
    to.scatter(OutRows, OutCols, out_buffer);
  };
  if (from.in_place(InRows, InCols)) return run(Strided<const T>(from.strided()));
  if constexpr (requires { from.by_table(); })
    if (from.by_table()) return run(from.template table<InRows, InCols>());
  alignas(64) T in_buffer[InRows * InCols * W];
  from.gather(InRows, InCols, in_buffer);
  run(dense<W, InCols>(static_cast<const T*>(in_buffer)));
}

// Runs job(i) for i in [0, count): on this thread alone, or shared among the threads of the
// enclosing parallel region, without waiting for them at the end.
template <class Job>
inline void run_jobs(bool alone, std::int64_t count, Job&& job) {
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
template <class T, class F>
void for_tile_chunks(const TileGrid& grid, const Block& b, std::int64_t channels, bool alone,
                     F&& f) {
  with_width<T>(channels, [&]<int W>() {
    const std::int64_t chunks = (channels + W - 1) / W;
    run_jobs(alone, b.count * chunks, [&](std::int64_t job) {
      const std::int64_t p = b.p0 + job / chunks, c0 = job % chunks * W;
      f.template operator()<W>(grid.at(p), p - b.p0, c0, std::min<std::int64_t>(W, channels - c0));
    });
  });
}

// The block's tiles of grid, their inputs read from `in` at the tile origin minus the padding,
// to the Winograd domain in v.
template <class T, int M, int R>
void inputs_to_domain(const Image<T>& in, const TileGrid& grid, const Block& b, std::int64_t pad_h,
                      std::int64_t pad_w, T* v, bool alone) {
  constexpr int a = M + R - 1;
  for_tile_chunks<T>(
      grid, b, in.c, alone,
      [&]<int W>(const TileGrid::Tile& tile, std::int64_t row, std::int64_t c0, std::int64_t cn) {
        const Window<T, W> from{in, tile.n, tile.y - pad_h, tile.x - pad_w, c0, cn};
        const Points<T, W, a> to{v + row * in.c + c0, b.stride(in.c), cn};
        transform_tile<T, W, a, a, a, a>(from, to,
                                         [](auto i, auto o) { input_tile<T, M, R, W>(i, o); });
      });
}

// The block's products in m back to their output tiles in `out`.
template <class T, int M, int R>
void outputs_from_domain(T* m, const TileGrid& grid, const Block& b, const Image<T>& out,
                         bool alone) {
  constexpr int a = M + R - 1;
  for_tile_chunks<T>(
      grid, b, out.c, alone,
      [&]<int W>(const TileGrid::Tile& tile, std::int64_t row, std::int64_t k0, std::int64_t kn) {
        const Points<T, W, a> from{m + row * out.c + k0, b.stride(out.c), kn};
        const Window<T, W> to{out, tile.n, tile.y, tile.x, k0, kn};
        transform_tile<T, W, a, a, M, M>(from, to,
                                         [](auto i, auto o) { output_tile<T, M, R, W>(i, o); });
      });
}

// The output gradients dy of the block's tiles to the Winograd domain in z.
template <class T, int M, int R>
void gradients_to_domain(const Image<T>& dy, const TileGrid& grid, const Block& b, T* z,
                         bool alone) {
  constexpr int a = M + R - 1;
  for_tile_chunks<T>(
      grid, b, dy.c, alone,
      [&]<int W>(const TileGrid::Tile& tile, std::int64_t row, std::int64_t k0, std::int64_t kn) {
        const Window<T, W> from{dy, tile.n, tile.y, tile.x, k0, kn};
        const Points<T, W, a> to{z + row * dy.c + k0, b.stride(dy.c), kn};
        transform_tile<T, W, M, M, a, a>(
            from, to, [](auto i, auto o) { output_gradient_tile<T, M, R, W>(i, o); });
      });
}

// The filter slice u[t] = (G g Gt)[t] for the R x R filter g at w with strides s (ci input and co
// output channels), stored [t][ci][co], or [t][co][ci] (transposed; the caller's choice where ci
// is the contiguous index in memory, as in the turned NHWC filter of backward-data). The
// transform runs on vectors along the slice's last index, reading the filter and writing the
// slice in place where that index is contiguous in the filter; only a last chunk narrower than
// kChunk, and NCHW filters (whose contiguous index is the tap), go through a buffer.
template <class T, int M, int R>
void filter_transform(const T* w, FilterStrides s, std::int64_t ci, std::int64_t co, T* u_all,
                      bool transposed) {
  constexpr int a = M + R - 1;
  // Row i of the slice, vector index j: the filter's element (i, j) at w[i * si + j * sj].
  const std::int64_t ni = transposed ? co : ci, nj = transposed ? ci : co;
  const std::int64_t si = transposed ? s.k : s.c, sj = transposed ? s.c : s.k;
  const std::int64_t chunks = (nj + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (std::int64_t job = 0; job < ni * chunks; ++job) {
    const std::int64_t i = job / chunks, j0 = job % chunks * kChunk;
    const std::int64_t jn = std::min<std::int64_t>(kChunk, nj - j0);
    const T* g = w + i * si + j0 * sj;
    const Strided<T> to{u_all + i * nj + j0, a * ni * nj, ni * nj};
    if (sj == 1 && jn == kChunk) {
      filter_tile<T, M, R, kChunk>(Strided<const T>{g, s.y, s.x}, to);
      continue;
    }
    alignas(64) T gathered[R * R * kChunk];
    alignas(64) T u[a * a * kChunk];
    for (int tap = 0; tap < R * R; ++tap) {
      T* e = gathered + tap * kChunk;
      for (std::int64_t j = 0; j < jn; ++j) e[j] = g[tap / R * s.y + tap % R * s.x + j * sj];
      fill(e + jn, kChunk - jn, T(0));
    }
    filter_tile<T, M, R, kChunk>(dense<kChunk, R>(+gathered), dense<kChunk, a>(+u));
    for (int t = 0; t < a * a; ++t) copy_short(u + t * kChunk, to(t / a, t % a), jn);
  }
}

// dw (strides fs) += Gt acc G, acc the gradient in the Winograd domain ([t][c][k]). Shares its
// loop among the threads of the enclosing parallel region.
template <class T, int M, int R>
void add_filter_gradient(const T* acc, std::int64_t c, std::int64_t k, FilterStrides fs, T* dw) {
  constexpr int a = M + R - 1;
  const std::int64_t chunks = (k + kChunk - 1) / kChunk;
#pragma omp for schedule(static)
  for (std::int64_t job = 0; job < c * chunks; ++job) {
    const std::int64_t ch = job / chunks, k0 = job % chunks * kChunk;
    const std::int64_t kn = std::min<std::int64_t>(kChunk, k - k0);
    const Strided<const T> from{acc + ch * k + k0, a * c * k, c * k};
    alignas(64) T du[a * a * kChunk];
    alignas(64) T dg[R * R * kChunk];
    if (kn == kChunk) {
      filter_gradient_tile<T, M, R, kChunk>(from, dense<kChunk, R>(+dg));
    } else {
      for (int t = 0; t < a * a; ++t) {
        copy_short(from(t / a, t % a), du + t * kChunk, kn);
        fill(du + t * kChunk + kn, kChunk - kn, T(0));
      }
      filter_gradient_tile<T, M, R, kChunk>(dense<kChunk, a>(+du), dense<kChunk, R>(+dg));
    }
    for (int tap = 0; tap < R * R; ++tap) {
      T* dst = dw + tap / R * fs.y + tap % R * fs.x + ch * fs.c + k0 * fs.k;
      const T* src = dg + tap * kChunk;
      if (fs.k == 1)
        for (std::int64_t j = 0; j < kn; ++j) dst[j] += src[j];
      else
        for (std::int64_t j = 0; j < kn; ++j) dst[j * fs.k] += src[j];
    }
  }
}

}  // namespace dtnn::winograd
