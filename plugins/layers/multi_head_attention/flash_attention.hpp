// Scaled dot-product attention of one (sample, head) pair by blocks, the way FlashAttention
// (Dao et al. 2022, and its second version's loop order) does it: no more of the T x S score
// matrix exists at a time than one block of query rows by one block of keys, and backward keeps
// from forward only each query row's log-sum-exp of its scores instead of the probabilities.
//
// Forward, per block of query rows, over blocks of keys with a running maximum m and sum l:
//   S = Q_blk K_kb^T * scale,  m' = max(m, rowmax S),  P = exp(S - m'),
//   l = l e^(m - m') + rowsum P,  C_blk = C_blk e^(m - m') + P V_kb
// and at the end C_blk /= l, lse = m + log l.
// Backward, with G = dC and delta_i = G_i . C_i (= rowsum(dP * P) of the materialised form):
//   P = exp(Q_blk K_kb^T * scale - lse),  dV_kb += P^T G_blk,  dP = G_blk V_kb^T,
//   dS = P * (dP - delta) * scale,  dQ_blk += dS K_kb,  dK_kb += dS^T Q_blk.
// Row i sees the keys below seen_by(i): all unpadded ones, and under a causal mask only 0..i, so
// a block of rows stops at the keys its last row sees. Every row sees key 0 (a sequence offers at
// least one key), so the first block of keys starts every row's running maximum.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "dtnn/fast_math.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/precision.hpp"
#include "dtnn/reductions.hpp"

namespace dtnn::flash_attention {

// Query rows per block: 128, or 64 under a causal mask (smaller blocks skip more of the masked
// products); keys per block. (AMD Zen 5, 1 thread, attention_bench: 64 x 256 blocks ran 3-18%
// slower than the stored kernel on every compare_transformer shape, 128 x 512 within 0-6%.)
inline constexpr std::int64_t kQueryBlock = 128;
inline constexpr std::int64_t kCausalQueryBlock = 64;
inline constexpr std::int64_t kKeyBlock = 512;
inline constexpr std::int64_t query_block(bool causal) {
  return causal ? kCausalQueryBlock : kQueryBlock;
}

// Scratch one thread needs: two kQueryBlock x kKeyBlock blocks and three values per row.
inline constexpr std::int64_t kScratch = 2 * kQueryBlock * kKeyBlock + 3 * kQueryBlock;

// One (sample, head) pair's operands, each a row-major matrix with its row stride.
template <class T>
struct Pair {
  const T* q;  // [T, d] queries
  std::int64_t ldq;
  const T* k;  // [S, d] keys
  const T* v;  // [S, d] values
  std::int64_t ldkv;
  T* c;  // [T, d] the context (forward writes it, backward reads it)
  std::int64_t ldc;
  std::int64_t queries, width;  // T, d
  std::int64_t valid;           // the unpadded keys, at least 1
  bool causal;
  T scale;  // 1 / sqrt(d)
  Precision precision;

  std::int64_t seen_by(std::int64_t i) const { return causal ? std::min(i + 1, valid) : valid; }
  // How many of the kc keys from kb on query row i sees.
  std::int64_t seen_in(std::int64_t i, std::int64_t kb, std::int64_t kc) const {
    return std::clamp<std::int64_t>(seen_by(i) - kb, 0, kc);
  }
};

template <class T>
void scale_row(T* __restrict r, std::int64_t n, T factor) {
  for (std::int64_t j = 0; j < n; ++j) r[j] *= factor;
}

// The context of query rows [row, row + rows) (rows at most query_block) and their log-sum-exp
// (lse, indexed by row).
template <class T>
void forward_block(const Pair<T>& a, std::int64_t row, std::int64_t rows, T* lse, T* scratch) {
  T* scores = scratch;  // [rows, kc]
  T* m = scratch + kQueryBlock * kKeyBlock;
  T* l = m + kQueryBlock;
  T* c = a.c + row * a.ldc;
  const std::int64_t keys = a.seen_by(row + rows - 1);
  for (std::int64_t kb = 0; kb < keys; kb += kKeyBlock) {
    const std::int64_t kc = std::min(kKeyBlock, keys - kb);
    gemm(a.precision, false, true, rows, kc, a.width, a.scale, a.q + row * a.ldq, a.ldq,
         a.k + kb * a.ldkv, a.ldkv, T(0), scores, kc);
    for (std::int64_t i = 0; i < rows; ++i) {
      T* __restrict s = scores + i * kc;
      const std::int64_t seen = a.seen_in(row + i, kb, kc);
      if (seen == 0) {  // only past a causal row's last key: nothing to add
        std::fill_n(s, kc, T(0));
        continue;
      }
      const T top = reduce::max(s, seen);
      const T m_new = kb == 0 ? top : std::max(m[i], top);
      for (std::int64_t j = 0; j < seen; ++j) s[j] = fast::exp(s[j] - m_new);
      std::fill(s + seen, s + kc, T(0));
      const T sum = reduce::sum(s, seen);
      if (kb == 0) {
        l[i] = sum;
      } else {
        const T alpha = std::exp(m[i] - m_new);
        l[i] = l[i] * alpha + sum;
        if (alpha != T(1)) scale_row(c + i * a.ldc, a.width, alpha);
      }
      m[i] = m_new;
    }
    gemm(a.precision, false, false, rows, a.width, kc, T(1), scores, kc, a.v + kb * a.ldkv, a.ldkv,
         kb == 0 ? T(0) : T(1), c, a.ldc);
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    scale_row(c + i * a.ldc, a.width, T(1) / l[i]);
    lse[row + i] = m[i] + std::log(l[i]);
  }
}

// dQ, dK and dV of the pair (each with its operand's row stride) from G = dC (row stride ldg) and
// forward's lse. dK and dV are summed over the blocks of query rows, so one thread does a pair.
template <class T>
void backward_pair(const Pair<T>& a, const T* g, std::int64_t ldg, const T* lse, T* dq, T* dk,
                   T* dv, std::int64_t keys_total, T* scratch) {
  T* p = scratch;                           // [rows, kc] the probabilities
  T* ds = p + kQueryBlock * kKeyBlock;      // [rows, kc] dP, then dS
  T* delta = ds + kQueryBlock * kKeyBlock;  // [rows]
  for (std::int64_t j = 0; j < keys_total; ++j) {
    std::fill_n(dk + j * a.ldkv, a.width, T(0));
    std::fill_n(dv + j * a.ldkv, a.width, T(0));
  }
  const std::int64_t block = query_block(a.causal);
  for (std::int64_t row = 0; row < a.queries; row += block) {
    const std::int64_t rows = std::min(block, a.queries - row);
    const std::int64_t keys = a.seen_by(row + rows - 1);
    const T* qb = a.q + row * a.ldq;
    const T* gb = g + row * ldg;
    T* dqb = dq + row * a.ldq;
    for (std::int64_t i = 0; i < rows; ++i)
      delta[i] = reduce::dot(gb + i * ldg, a.c + (row + i) * a.ldc, a.width);
    for (std::int64_t kb = 0; kb < keys; kb += kKeyBlock) {
      const std::int64_t kc = std::min(kKeyBlock, keys - kb);
      const T* kk = a.k + kb * a.ldkv;
      const T* vk = a.v + kb * a.ldkv;
      gemm(a.precision, false, true, rows, kc, a.width, a.scale, qb, a.ldq, kk, a.ldkv, T(0), p,
           kc);
      for (std::int64_t i = 0; i < rows; ++i) {
        T* __restrict r = p + i * kc;
        const std::int64_t seen = a.seen_in(row + i, kb, kc);
        const T shift = lse[row + i];
        for (std::int64_t j = 0; j < seen; ++j) r[j] = fast::exp(r[j] - shift);
        std::fill(r + seen, r + kc, T(0));
      }
      gemm(a.precision, true, false, kc, a.width, rows, T(1), p, kc, gb, ldg, T(1),
           dv + kb * a.ldkv, a.ldkv);
      gemm(a.precision, false, true, rows, kc, a.width, T(1), gb, ldg, vk, a.ldkv, T(0), ds, kc);
      for (std::int64_t i = 0; i < rows; ++i) {
        const T* __restrict pr = p + i * kc;
        T* __restrict dr = ds + i * kc;
        const T di = delta[i];
        for (std::int64_t j = 0; j < kc; ++j) dr[j] = pr[j] * (dr[j] - di) * a.scale;
      }
      gemm(a.precision, false, false, rows, a.width, kc, T(1), ds, kc, kk, a.ldkv,
           kb == 0 ? T(0) : T(1), dqb, a.ldq);
      gemm(a.precision, true, false, kc, a.width, rows, T(1), ds, kc, qb, a.ldq, T(1),
           dk + kb * a.ldkv, a.ldkv);
    }
  }
}

}  // namespace dtnn::flash_attention
