// An implicit GEMM on BLIS's own micro-kernel and blocking parameters: C[m, n] (+)= A[m, k] B[k, n]
// where A and B are never stored as matrices. The caller packs them, one micro-panel at a time,
// straight from wherever their elements live (an image, a filter), so a convolution's im2col
// happens inside the packing (PyDTNN's ConvGemm; Goto's five loops around the micro-kernel):
//
//   for jc in n step NC:              B panel  kc x nc  packed in NR-wide micro-panels
//     for pc in k step KC:
//       for ic in my rows step MC:    A block  mc x kc  packed in MR-tall micro-panels
//         for jr, ir:                 micro-kernel: MR x NR of C from kc products
//
// The threads split the rows of C (in whole micro-panels); each packs its own A and B.
//
// Lower precision (ConvGeometry::precision, float only): the packed panels are what the products
// read, so they are made so once packed. In bf16 on a CPU with AVX512-BF16 each panel becomes
// bf16 pairs in place and a 12 x 32 micro-kernel sums pairs of products into float32 with
// `vdpbf16ps` (bf16_ukr.hpp); otherwise the panels' values are rounded to the format in place and
// BLIS's float32 micro-kernel multiplies them (fp16 always: no CPU here has its dot product).
#pragma once
#include <blis.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "bf16_ukr.hpp"
#include "dtnn/precision.hpp"

namespace dtnn::implicit_gemm {

// The micro-kernel for T on this CPU (BLIS's native one, or the bf16 one), its blocking
// parameters, and what the panels become once packed.
template <class T>
struct Kernel {
  using Ukr = void (*)(dim_t m, dim_t n, dim_t k, T* alpha, T* a, T* b, T* beta, T* c, inc_t rs_c,
                       inc_t cs_c, auxinfo_t* data, cntx_t* cntx);
  Ukr ukr = nullptr;
  cntx_t* cntx = nullptr;
  std::int64_t mr = 0, nr = 0, mc = 0, kc = 0, nc = 0;
  Precision precision = Precision::fp32;  // of the operands the products read
  bool bf16_pairs = false;                // packed panels become bf16 pairs (bf16_ukr.hpp)

  static Kernel query(Precision precision = Precision::fp32) {
    constexpr num_t dt = std::is_same_v<T, float> ? BLIS_FLOAT : BLIS_DOUBLE;
    Kernel k;
    k.cntx = bli_gks_query_cntx();
    if constexpr (std::is_same_v<T, float>) {
      k.precision = precision;
      if (precision == Precision::bf16 && bf16::available()) {
        k.ukr = &bf16::ukr;
        k.mr = bf16::kMr, k.nr = bf16::kNr, k.mc = bf16::kMc, k.kc = bf16::kKc, k.nc = bf16::kNc;
        k.bf16_pairs = true;
        return k;
      }
    }
    k.ukr = reinterpret_cast<Ukr>(bli_cntx_get_l3_nat_ukr_dt(dt, BLIS_GEMM_UKR, k.cntx));
    k.mr = bli_cntx_get_blksz_def_dt(dt, BLIS_MR, k.cntx);
    k.nr = bli_cntx_get_blksz_def_dt(dt, BLIS_NR, k.cntx);
    k.mc = bli_cntx_get_blksz_def_dt(dt, BLIS_MC, k.cntx);
    k.kc = bli_cntx_get_blksz_def_dt(dt, BLIS_KC, k.cntx);
    k.nc = bli_cntx_get_blksz_def_dt(dt, BLIS_NC, k.cntx);
    return k;
  }

  // Makes `panels` packed panels of `width` (mr or nr) x kc values at p what the micro-kernel
  // reads: nothing in float32, bf16 pairs in place, or values rounded in place.
  void prepare(T* p, std::int64_t panels, std::int64_t width, std::int64_t kc) const {
    if constexpr (std::is_same_v<T, float>) {
      if (bf16_pairs) {
        for (std::int64_t i = 0; i < panels; ++i)
          bf16::to_pairs_fast(p + i * width * kc, width, kc);
      } else if (precision != Precision::fp32) {
        round_to(precision, p, p, panels * width * kc);
      }
    }
  }
  bool lower() const { return precision != Precision::fp32; }

  // Whether run() can use these blocking parameters (its per-thread row table holds MC rows).
  bool fits() const;

  // The packing buffers (elements) of an m x n x k product: a block of A for each thread, a panel
  // of B.
  std::int64_t a_buffer(std::int64_t m, std::int64_t k) const {
    return std::min(mc, round_up(m, mr)) * std::min(kc, k);
  }
  std::int64_t b_buffer(std::int64_t n, std::int64_t k) const {
    return std::min(kc, k) * round_up(std::min(nc, n), nr);
  }
  static std::int64_t round_up(std::int64_t v, std::int64_t step) {
    return (v + step - 1) / step * step;
  }
};

// The largest MC block run() handles (BLIS's are a few hundred rows at most), and the largest
// micro-kernel tile (BLIS's skx sgemm kernel is 32 x 12, its haswell one 6 x 16).
inline constexpr std::int64_t kMaxMc = 1024, kMaxMr = 32, kMaxNr = 32;

template <class T>
bool Kernel<T>::fits() const {
  return mr <= kMaxMr && nr <= kMaxNr && mc <= kMaxMc;
}

// Where C lives: element (i, j) at base[row(i) + col(j)]. The micro-kernel writes an MR x NR tile
// in place where its rows are evenly spaced and so are its columns (always, for plain row-major C
// with row(i) = i * ld and col(j) = j); other tiles go through a buffer.
template <class T, class RowOffset, class ColOffset>
struct Output {
  T* base;
  RowOffset row;
  ColOffset col;
  std::int64_t ld;  // > 0: C is plain row-major with this leading dimension
};

// The common step between offsets[0..count), or 0 when they are not evenly spaced.
inline std::int64_t even_step(const std::int64_t* offsets, std::int64_t count) {
  if (count < 2) return 1;
  const std::int64_t step = offsets[1] - offsets[0];
  for (std::int64_t r = 2; r < count; ++r)
    if (offsets[r] - offsets[r - 1] != step) return 0;
  return step;
}

// The scratch a thread needs to place C's tiles through an Output that is not plain row-major.
struct TileScratch {
  std::int64_t row_at[kMaxMc];  // where the rows of the current MC block start
  std::int64_t col_at[kMaxNr];  // and the columns of the current NR panel
};

// C[ic, ic + mc) x [jc, jc + nc) (first: the beta of this kc slice) += a packed MC x KC block of A
// times a packed KC x NC panel of B, one MR x NR micro-kernel call at a time.
template <class T, class RowOffset, class ColOffset>
void multiply_block(const Kernel<T>& kr, std::int64_t ic, std::int64_t mc, std::int64_t jc,
                    std::int64_t nc, std::int64_t kc, T* a, T* b, T first,
                    const Output<T, RowOffset, ColOffset>& c, TileScratch& s) {
  T one = 1;
  auxinfo_t aux{};
  if (c.ld <= 0)
    for (std::int64_t r = 0; r < mc; ++r) s.row_at[r] = c.row(ic + r);
  for (std::int64_t jr = 0; jr < nc; jr += kr.nr) {
    const std::int64_t nr = std::min(kr.nr, nc - jr);
    T* bp = b + jr * kc;
    std::int64_t col_step = 1;
    if (c.ld <= 0) {
      for (std::int64_t q = 0; q < nr; ++q) s.col_at[q] = c.col(jc + jr + q);
      col_step = even_step(s.col_at, nr);
    }
    for (std::int64_t ir = 0; ir < mc; ir += kr.mr) {
      const std::int64_t mr = std::min(kr.mr, mc - ir);
      T* ap = a + ir * kc;
      bli_auxinfo_set_next_a(ap, &aux);
      bli_auxinfo_set_next_b(bp, &aux);
      const std::int64_t i = ic + ir, j = jc + jr;
      if (c.ld > 0) {
        kr.ukr(mr, nr, kc, &one, ap, bp, &first, c.base + i * c.ld + j, c.ld, 1, &aux, kr.cntx);
        continue;
      }
      // Rows and columns each at one stride from the next (a panel within one row of an image,
      // say): the micro-kernel writes them in place.
      const std::int64_t* rows = s.row_at + ir;
      const std::int64_t row_step = even_step(rows, mr);
      if (row_step != 0 && col_step != 0) {
        kr.ukr(mr, nr, kc, &one, ap, bp, &first, c.base + rows[0] + s.col_at[0], row_step, col_step,
               &aux, kr.cntx);
        continue;
      }
      alignas(64) T tile[kMaxMr * kMaxNr];
      T zero = 0;
      kr.ukr(mr, nr, kc, &one, ap, bp, &zero, tile, kr.nr, 1, &aux, kr.cntx);
      for (std::int64_t r = 0; r < mr; ++r) {
        T* dst = c.base + rows[r];
        const T* src = tile + r * kr.nr;
        if (first == T(0))
          for (std::int64_t q = 0; q < nr; ++q) dst[s.col_at[q]] = src[q];
        else
          for (std::int64_t q = 0; q < nr; ++q) dst[s.col_at[q]] += src[q];
      }
    }
  }
}

// A B packer that fills a whole KC x NC slice of B, a range of its rows at a time:
// pack(jc, nc, p0, kc, q0, q1, slice) writes rows [q0, q1) of each NR-wide panel of the slice
// (panel jr at slice + jr * kc). For a B whose rows are contiguous in memory (a filter with its
// output channels innermost) it reads each row once, in order; packing panel by panel reads every
// row in NR-value pieces, a whole row apart (VGG's 512-channel filters: 2 KiB).
template <class F>
struct SlicePacker {
  F pack;
};
template <class F>
inline constexpr bool is_slice_packer = false;
template <class F>
inline constexpr bool is_slice_packer<SlicePacker<F>> = true;

// C (+)= A B: beta 0 overwrites C, 1 accumulates. pack_a(i, p0, kc, panel) writes rows [i, i+MR)
// (zeros past m) x columns [p0, p0+kc) as panel[p * MR + r]; pack_b(j, p0, kc, panel) writes rows
// [p0, p0+kc) x columns [j, j+NR) (zeros past n) as panel[p * NR + c], or is a SlicePacker that
// fills a KC x NC slice of those panels a range of rows at a time. a_buf holds
// Kernel::a_buffer(m, k) elements per thread; b_buf, b_buffer(n, k) elements that the threads
// share: they pack each B panel together, then each multiplies its own rows of A by all of it.
template <class T, class PackA, class PackB, class RowOffset, class ColOffset>
void run(const Kernel<T>& kr, std::int64_t m, std::int64_t n, std::int64_t k, PackA&& pack_a,
         PackB&& pack_b, const Output<T, RowOffset, ColOffset>& c, T beta, T* a_buf, T* b_buf) {
  if (m == 0 || n == 0) return;
  const std::int64_t panels = (m + kr.mr - 1) / kr.mr;
  const std::int64_t a_size = kr.a_buffer(m, k);
#pragma omp parallel if (m * n * k > 64 * 64 * 64)
  {
    const int threads = omp_get_num_threads(), t = omp_get_thread_num();
    const std::int64_t share = (panels + threads - 1) / threads;
    const std::int64_t row0 = std::min(m, t * share * kr.mr);
    const std::int64_t row1 = std::min(m, (t + 1) * share * kr.mr);
    T* a = a_buf + t * a_size;
    TileScratch scratch;
    for (std::int64_t jc = 0; jc < n; jc += kr.nc) {
      const std::int64_t nc = std::min(kr.nc, n - jc);
      for (std::int64_t pc = 0; pc < k; pc += kr.kc) {
        const std::int64_t kc = std::min(kr.kc, k - pc);
        if constexpr (is_slice_packer<std::remove_cvref_t<PackB>>) {
          constexpr std::int64_t kRows = 16;
#pragma omp for schedule(static)
          for (std::int64_t q0 = 0; q0 < kc; q0 += kRows)
            pack_b.pack(jc, nc, pc, kc, q0, std::min(kc, q0 + kRows), b_buf);
        } else {
#pragma omp for schedule(static)
          for (std::int64_t jr = 0; jr < nc; jr += kr.nr) pack_b(jc + jr, pc, kc, b_buf + jr * kc);
        }
        // (the loops' closing barrier: the whole panel is packed)
        if (kr.lower()) {
#pragma omp for schedule(static)
          for (std::int64_t jr = 0; jr < nc; jr += kr.nr) kr.prepare(b_buf + jr * kc, 1, kr.nr, kc);
        }
        for (std::int64_t ic = row0; ic < row1; ic += kr.mc) {
          const std::int64_t mc = std::min(kr.mc, row1 - ic);
          for (std::int64_t ir = 0; ir < mc; ir += kr.mr) pack_a(ic + ir, pc, kc, a + ir * kc);
          kr.prepare(a, (mc + kr.mr - 1) / kr.mr, kr.mr, kc);
          multiply_block(kr, ic, mc, jc, nc, kc, a, b_buf, pc == 0 ? beta : T(1), c, scratch);
        }
#pragma omp barrier  // every thread is done with the panel before the next one is packed
      }
    }
  }
}

// C (+)= A B with k split between the threads: each multiplies its own range of k into a private
// m x n buffer, packing its own A and B (no barriers, nothing shared), then the buffers are added
// into C. For products with a small C and a long k, such as a convolution's filter gradient over
// every pixel of a batch, where run() would synchronise the threads for every KC slice of k.
// a_buf, b_buf and c_buf hold a_buffer(m, k), b_buffer(n, k) and m * n elements per thread.
template <class T, class PackA, class PackB, class RowOffset, class ColOffset>
void run_split_k(const Kernel<T>& kr, std::int64_t m, std::int64_t n, std::int64_t k,
                 PackA&& pack_a, PackB&& pack_b, const Output<T, RowOffset, ColOffset>& c, T beta,
                 T* a_buf, T* b_buf, T* c_buf) {
  if (m == 0 || n == 0) return;
#pragma omp parallel
  {
    const int threads = omp_get_num_threads(), t = omp_get_thread_num();
    const std::int64_t share = (k + threads - 1) / threads;
    const std::int64_t k0 = std::min(k, t * share), k1 = std::min(k, k0 + share);
    T* a = a_buf + t * kr.a_buffer(m, k);
    T* b = b_buf + t * kr.b_buffer(n, k);
    T* mine = c_buf + t * m * n;
    if (k0 == k1) std::fill(mine, mine + m * n, T(0));
    auto row = [n](std::int64_t i) { return i * n; };
    auto col = [](std::int64_t j) { return j; };
    const Output<T, decltype(row), decltype(col)> private_c{mine, row, col, n};
    TileScratch scratch;
    for (std::int64_t jc = 0; jc < n; jc += kr.nc) {
      const std::int64_t nc = std::min(kr.nc, n - jc);
      for (std::int64_t pc = k0; pc < k1; pc += kr.kc) {
        const std::int64_t kc = std::min(kr.kc, k1 - pc);
        for (std::int64_t jr = 0; jr < nc; jr += kr.nr) pack_b(jc + jr, pc, kc, b + jr * kc);
        kr.prepare(b, (nc + kr.nr - 1) / kr.nr, kr.nr, kc);
        for (std::int64_t ic = 0; ic < m; ic += kr.mc) {
          const std::int64_t mc = std::min(kr.mc, m - ic);
          for (std::int64_t ir = 0; ir < mc; ir += kr.mr) pack_a(ic + ir, pc, kc, a + ir * kc);
          kr.prepare(a, (mc + kr.mr - 1) / kr.mr, kr.mr, kc);
          multiply_block(kr, ic, mc, jc, nc, kc, a, b, pc == k0 ? T(0) : T(1), private_c, scratch);
        }
      }
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
      T* dst = c.base + c.row(i);
      for (std::int64_t j = 0; j < n; ++j) {
        T& out = dst[c.col(j)];
        T sum = beta == T(0) ? T(0) : out;
        for (int u = 0; u < threads; ++u) sum += c_buf[u * m * n + i * n + j];
        out = sum;
      }
    }
  }
}

}  // namespace dtnn::implicit_gemm
