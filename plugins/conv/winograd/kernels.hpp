// The winograd plugin's Winograd-domain kernels (the tile and filter transforms, domain.hpp), as a
// table for winograd.cpp (kernels.cpp). Their vectors are as wide as the instruction set the
// plugin is compiled for: the plugin is built once per level (ISA_VARIANTS), and the registry
// loads the best one this CPU runs.
#pragma once
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "dtnn/conv_algorithm.hpp"

namespace dtnn::winograd {

inline constexpr int kChunk = 32;  // the widest chunk of channels a transform takes at once

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

// A block of tiles [p0, p0 + count) of a grid in the Winograd domain: point t of tile p, channel
// c at base[t * stride(channels) + (p - p0) * channels + c], where the block has room for
// `capacity` tiles. Between one point's rows and the next's there is a cache line beyond the
// block's tiles, so that the a*a points a tile transform touches do not share cache sets (a
// block is a power of two bytes on most layers).
struct Block {
  std::int64_t p0, count, capacity;
  std::int64_t stride(std::int64_t channels) const { return capacity * channels + 16; }
};

// The kernels of F(M x M, R x R) for T. `alone`: the call runs on this thread alone; otherwise it
// shares its work among the threads of the enclosing parallel region (without a barrier at the
// end). filter_transform opens its own parallel region.
template <class T, int M, int R>
struct Kernels {
  // The block's tiles of grid, their inputs read from `in` at the tile origin minus the padding,
  // to the Winograd domain in v.
  void (*inputs_to_domain)(const Image<T>& in, const TileGrid& grid, const Block& b,
                           std::int64_t pad_h, std::int64_t pad_w, T* v, bool alone);
  // The block's products in m back to their output tiles in `out`.
  void (*outputs_from_domain)(T* m, const TileGrid& grid, const Block& b, const Image<T>& out,
                              bool alone);
  // The output gradients dy of the block's tiles to the Winograd domain in z.
  void (*gradients_to_domain)(const Image<T>& dy, const TileGrid& grid, const Block& b, T* z,
                              bool alone);
  // u = the filter slice (G g Gt)[t] of the R x R filter at w with strides s (ci input and co
  // output channels), [t][ci][co], or [t][co][ci] when `transposed` (taken where ci is the
  // contiguous index).
  void (*filter_transform)(const T* w, FilterStrides s, std::int64_t ci, std::int64_t co, T* u,
                           bool transposed);
  // dw (strides fs) += Gt acc G, acc the gradient in the Winograd domain ([t][c][k]).
  void (*add_filter_gradient)(const T* acc, std::int64_t c, std::int64_t k, FilterStrides fs,
                              T* dw);
};

// Every variant for both dtypes: F(2x2,3x3), F(4x4,3x3), F(3x3,2x2), F(2x2,5x5).
template <class T>
using Variants = std::tuple<Kernels<T, 2, 3>, Kernels<T, 4, 3>, Kernels<T, 3, 2>, Kernels<T, 2, 5>>;

struct KernelSet {
  Variants<float> f;
  Variants<double> d;

  template <class T, int M, int R>
  const Kernels<T, M, R>& get() const {
    if constexpr (std::is_same_v<T, float>)
      return std::get<Kernels<T, M, R>>(f);
    else
      return std::get<Kernels<T, M, R>>(d);
  }
};

const KernelSet& kernel_set();  // kernels.cpp

}  // namespace dtnn::winograd
