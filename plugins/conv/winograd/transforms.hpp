// Winograd minimal filtering F(m x m, r x r) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016): an m x m output tile from an a x a input tile, a = m + r - 1, with a*a
// multiplications per channel pair instead of r*r*m*m. The matrices come from the Cook-Toom
// construction on the points named with each: At[i][j] = p_j^i, G[j][k] = p_j^k / prod_{l != j}
// (p_j - p_l), the point at infinity as last column of At and last row of G, and Bt solved so that
// At [(G g) .* (Bt d)] is the correlation of d with g (checked exactly, in rationals, when
// written).
//   forward:          Y = At [ (G g Gt) .* (Bt d B) ] A
//   filter gradient:  dg = Gt [ sum over tiles (Bt d B) .* (A dY At) ] G
// Every transform here works on a chunk of W channels at once (8, 16 or 32): each entry of a tile
// is W contiguous values, so each coefficient multiplies whole simd vectors (simd.hpp: GCC vector
// types) as wide as the instruction set the plugin is compiled for has: 64 bytes for AVX-512, 32
// for AVX2, 16 otherwise (the plugin is built once per level, cmake/DtnnIsa.cmake). The
// loops over the matrices are unrolled, so zero coefficients are dropped at compile time.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "dtnn/simd.hpp"

namespace dtnn::winograd {

// The widest simd vector of the instruction set this is compiled for.
inline constexpr int kTransformBytes = simd::kWidestBytes;

template <int M, int R>
struct Matrices;

// F(2x2, 3x3): points 0, 1, -1, infinity.
template <>
struct Matrices<2, 3> {
  static constexpr int kAlpha = 4;
  static constexpr double bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

// F(4x4, 3x3): points 0, 1, -1, 2, -2, infinity.
template <>
struct Matrices<4, 3> {
  static constexpr int kAlpha = 6;
  static constexpr double bt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                      {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                      {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr double g[6][3] = {{1.0 / 4, 0, 0},
                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                     {0, 0, 1}};
  static constexpr double at[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};

// F(3x3, 2x2): points 0, 1, -1, infinity.
template <>
struct Matrices<3, 2> {
  static constexpr int kAlpha = 4;
  static constexpr double bt[4][4] = {{-1, 0, 1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, -1, 0, 1}};
  static constexpr double g[4][2] = {{-1, 0}, {0.5, 0.5}, {0.5, -0.5}, {0, 1}};
  static constexpr double at[3][4] = {{1, 1, 1, 0}, {0, 1, -1, 0}, {0, 1, 1, 1}};
};

// F(2x2, 5x5): points 0, 1, -1, 2, -2, infinity (F(4x4,3x3)'s input transform).
template <>
struct Matrices<2, 5> {
  static constexpr int kAlpha = 6;
  static constexpr double bt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                      {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                      {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr double g[6][5] = {{1.0 / 4, 0, 0, 0, 0},
                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6, 1.0 / 3, 2.0 / 3},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6, -1.0 / 3, 2.0 / 3},
                                     {0, 0, 0, 0, 1}};
  static constexpr double at[2][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 1}};
};

// The transforms read and write a tile through accessors: at(r, s) points to the W contiguous
// channel values of entry (r, s).
// Strided: entry (r, s) at base + r * row + s * col. The same tile may be a dense buffer
// ([rows][cols][W]), a window of an NHWC image (row and column strides of the image) or a tile's
// points in a Winograd-domain block.
template <class T>
struct Strided {
  T* base;
  std::int64_t row, col;
  T* operator()(int r, int s) const { return base + r * row + s * col; }
  operator Strided<const T>() const requires(!std::is_const_v<T>) { return {base, row, col}; }
};

// Table: each entry's own pointer (a tile at an image's border, whose entries outside the image
// point to zeros).
template <class T, int Rows, int Cols>
struct Table {
  const T* entry[Rows * Cols];
  const T* operator()(int r, int s) const { return entry[r * Cols + s]; }
};

// A dense [rows][cols][W] tile.
template <int W, int Cols, class T>
Strided<T> dense(T* p) {
  return {p, Cols * W, W};
}

// out(i, j) = sum_{r,s} L(i, r) in(r, s) R(j, s) for I x J outputs from an R_ x S input, each
// entry a chunk of W channels, computed in simd vectors of up to kTransformBytes (explicit, since
// the compiler unrolls a 16-value loop completely and then leaves it scalar). L and R are accessors
// returning matrix coefficients, so one function serves Bt d B, G g Gt, At m A and their
// transposes; zero coefficients are dropped at compile time.
template <class T, int W, int I, int R_, int J, int S, class In, class Out, class Left, class Right>
inline void sandwich(In in, Out out, Left left, Right right) {
  constexpr int kBytes = std::min<int>(kTransformBytes, W * sizeof(T));
  using V = simd::Vec<T, kBytes>;
  constexpr int kL = kBytes / static_cast<int>(sizeof(T)), kNV = W / kL;
  static_assert(W % kL == 0, "a chunk is whole vectors");
  // Row by row: row i of L in (S vectors a chunk) and at once its J outputs, so that what is live
  // fits the vector registers (all I x S partial rows at once spill on a 6 x 6 tile).
#pragma GCC unroll 8
  for (int i = 0; i < I; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < kNV; ++v) {
      V row[S];
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) {
        V sum = {};
#pragma GCC unroll 8
        for (int r = 0; r < R_; ++r) {
          const T coef = static_cast<T>(left(i, r));
          if (coef != T(0)) sum += coef * simd::load<T, kBytes>(in(r, s) + v * kL);
        }
        row[s] = sum;
      }
#pragma GCC unroll 8
      for (int j = 0; j < J; ++j) {
        V sum = {};
#pragma GCC unroll 8
        for (int s = 0; s < S; ++s) {
          const T coef = static_cast<T>(right(j, s));
          if (coef != T(0)) sum += coef * row[s];
        }
        simd::store<T, kBytes>(out(i, j) + v * kL, sum);
      }
    }
}

// The matrices of F(M x M, R x R) as coefficient accessors for sandwich: left(i, r), right(j, s).
template <int M, int R>
struct Sides {
  using Mat = Matrices<M, R>;
  static constexpr int a = Mat::kAlpha;
  static constexpr auto bt = [](int i, int r) { return Mat::bt[i][r]; };
  static constexpr auto g = [](int i, int r) { return Mat::g[i][r]; };
  static constexpr auto gt = [](int i, int r) { return Mat::g[r][i]; };
  static constexpr auto at = [](int i, int r) { return Mat::at[i][r]; };
  static constexpr auto a_ = [](int i, int r) { return Mat::at[r][i]; };
};

// V = Bt d B: an a x a input tile to the Winograd domain.
template <class T, int M, int R, int W, class In, class Out>
inline void input_tile(In d, Out v) {
  using S = Sides<M, R>;
  sandwich<T, W, S::a, S::a, S::a, S::a>(d, v, S::bt, S::bt);
}

// U = G g Gt: an R x R filter to the Winograd domain.
template <class T, int M, int R, int W, class In, class Out>
inline void filter_tile(In g, Out u) {
  using S = Sides<M, R>;
  sandwich<T, W, S::a, R, S::a, R>(g, u, S::g, S::g);
}

// Y = At m A: a Winograd-domain product back to an m x m output tile.
template <class T, int M, int R, int W, class In, class Out>
inline void output_tile(In m, Out y) {
  using S = Sides<M, R>;
  sandwich<T, W, M, S::a, M, S::a>(m, y, S::at, S::at);
}

// Z = A dY At: an m x m output-gradient tile to the Winograd domain (the adjoint of output_tile).
template <class T, int M, int R, int W, class In, class Out>
inline void output_gradient_tile(In dy, Out z) {
  using S = Sides<M, R>;
  sandwich<T, W, S::a, M, S::a, M>(dy, z, S::a_, S::a_);
}

// dg = Gt dU G: a Winograd-domain filter gradient back to R x R (the adjoint of filter_tile).
template <class T, int M, int R, int W, class In, class Out>
inline void filter_gradient_tile(In du, Out dg) {
  using S = Sides<M, R>;
  sandwich<T, W, R, S::a, R, S::a>(du, dg, S::gt, S::gt);
}

}  // namespace dtnn::winograd
