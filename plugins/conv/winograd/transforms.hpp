// Winograd minimal filtering F(m x m, 3 x 3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016): an m x m output tile from an a x a input tile, a = m + 2, with a*a
// multiplications per channel pair instead of 9*m*m.
//   forward:          Y = At [ (G g Gt) .* (Bt d B) ] A
//   filter gradient:  dg = Gt [ sum over tiles (Bt d B) .* (A dY At) ] G
// Every transform here works on a chunk of kChunk channels at once: a tile is [rows][cols][kChunk]
// with the channel innermost, so each coefficient multiplies a whole contiguous chunk, which the
// compiler turns into AVX-512, AVX2 or plain code for the target (the build uses -march=native).
// The loops over the matrices are unrolled, so zero coefficients are dropped at compile time.
#pragma once
#include <cstdint>

namespace dtnn::winograd {

inline constexpr int kChunk = 32;  // channels a transform processes at once

template <int M>
struct Matrices;

// F(2x2, 3x3): points 0, 1, -1, infinity.
template <>
struct Matrices<2> {
  static constexpr int kAlpha = 4;
  static constexpr double bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

// F(4x4, 3x3): points 0, 1, -1, 2, -2, infinity.
template <>
struct Matrices<4> {
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

// out[i][j] = sum_{r,s} L(i, r) in[r][s] R(j, s) for I x J outputs from an R_ x S input, each
// entry a chunk of kChunk values. L and R are accessors returning matrix coefficients, so one
// function serves Bt d B, G g Gt, At m A and their transposes.
template <class T, int I, int R_, int J, int S, class Left, class Right>
inline void sandwich(const T* __restrict in, T* __restrict out, Left left, Right right) {
  T tmp[I * S * kChunk];
#pragma GCC unroll 8
  for (int i = 0; i < I; ++i)
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) {
      T* __restrict t = tmp + (i * S + s) * kChunk;
      for (int c = 0; c < kChunk; ++c) t[c] = T(0);
#pragma GCC unroll 8
      for (int r = 0; r < R_; ++r) {
        const T coef = static_cast<T>(left(i, r));
        if (coef == T(0)) continue;
        const T* __restrict v = in + (r * S + s) * kChunk;
        for (int c = 0; c < kChunk; ++c) t[c] += coef * v[c];
      }
    }
#pragma GCC unroll 8
  for (int i = 0; i < I; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < J; ++j) {
      T* __restrict o = out + (i * J + j) * kChunk;
      for (int c = 0; c < kChunk; ++c) o[c] = T(0);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) {
        const T coef = static_cast<T>(right(j, s));
        if (coef == T(0)) continue;
        const T* __restrict v = tmp + (i * S + s) * kChunk;
        for (int c = 0; c < kChunk; ++c) o[c] += coef * v[c];
      }
    }
}

// V = Bt d B: an a x a input tile to the Winograd domain.
template <class T, int M>
inline void input_tile(const T* d, T* v) {
  using W = Matrices<M>;
  constexpr int a = W::kAlpha;
  auto bt = [](int i, int r) { return W::bt[i][r]; };
  sandwich<T, a, a, a, a>(d, v, bt, bt);
}

// U = G g Gt: a 3 x 3 filter to the Winograd domain.
template <class T, int M>
inline void filter_tile(const T* g, T* u) {
  using W = Matrices<M>;
  constexpr int a = W::kAlpha;
  auto gm = [](int i, int r) { return W::g[i][r]; };
  sandwich<T, a, 3, a, 3>(g, u, gm, gm);
}

// Y = At m A: a Winograd-domain product back to an m x m output tile.
template <class T, int M>
inline void output_tile(const T* m, T* y) {
  using W = Matrices<M>;
  constexpr int a = W::kAlpha;
  auto at = [](int i, int r) { return W::at[i][r]; };
  sandwich<T, M, a, M, a>(m, y, at, at);
}

// Z = A dY At: an m x m output-gradient tile to the Winograd domain (the adjoint of output_tile).
template <class T, int M>
inline void output_gradient_tile(const T* dy, T* z) {
  using W = Matrices<M>;
  constexpr int a = W::kAlpha;
  auto a_ = [](int i, int r) { return W::at[r][i]; };
  sandwich<T, a, M, a, M>(dy, z, a_, a_);
}

// dg = Gt dU G: a Winograd-domain filter gradient back to 3 x 3 (the adjoint of filter_tile).
template <class T, int M>
inline void filter_gradient_tile(const T* du, T* dg) {
  using W = Matrices<M>;
  constexpr int a = W::kAlpha;
  auto gt = [](int i, int r) { return W::g[r][i]; };
  sandwich<T, 3, a, 3, a>(du, dg, gt, gt);
}

}  // namespace dtnn::winograd
