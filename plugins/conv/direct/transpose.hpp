// The planar engine's moves between an NHWC image row and its planar tile: a row of w pixels of P
// channels each (pixel q's channel p at q * P + p) to P plane rows (channel p of pixel q at
// p * plane + q), and back. On simplecnn's few-channel layers these moves took a third of the
// layer's time as scalar strided loops (perf, AMD Zen 5). With AVX, float rows whose channel count
// is a multiple of 4 move 8 pixels at a time through an 8 x 8 transposition in registers (a block
// of 4 channels as the upper half of one: zeros in, ignored out); the plain loops do the rest and
// stand as the reference.
#pragma once
#include <cstdint>
#include <type_traits>

// (A test may ask for the AVX moves in any build: DTNN_DIRECT_TRANSPOSE_ANY_BUILD.)
#if defined(__AVX__) || defined(DTNN_DIRECT_TRANSPOSE_ANY_BUILD)
#include <immintrin.h>
#define DTNN_DIRECT_TRANSPOSE_AVX 1
#endif

namespace dtnn::direct {

// planes[p * plane + q] = pixels[q * P + p] for p < P, q < w. Plain loops; P_ > 0 fixes P at
// compile time (the compiler then vectorises the strided moves somewhat).
template <int P_, class T>
void pixels_to_planes_plain(const T* pixels, std::int64_t w, std::int64_t P, T* planes,
                            std::int64_t plane) {
  const std::int64_t np = P_ ? P_ : P;
  for (std::int64_t p = 0; p < np; ++p)
    for (std::int64_t q = 0; q < w; ++q) planes[p * plane + q] = pixels[q * np + p];
}

// pixels[q * P + p] = planes[p * plane + q] for p < P, q < w.
template <int P_, class T>
void planes_to_pixels_plain(const T* planes, std::int64_t plane, std::int64_t w, std::int64_t P,
                            T* pixels) {
  const std::int64_t np = P_ ? P_ : P;
  for (std::int64_t q = 0; q < w; ++q)
    for (std::int64_t p = 0; p < np; ++p) pixels[q * np + p] = planes[p * plane + q];
}

#ifdef DTNN_DIRECT_TRANSPOSE_AVX

#define DTNN_DIRECT_TRANSPOSE_TARGET __attribute__((target("avx")))

// r[i][j] -> r[j][i] for an 8 x 8 block of floats held as 8 rows.
DTNN_DIRECT_TRANSPOSE_TARGET inline void transpose8x8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// pixels_to_planes for float and P a multiple of 4: channels in blocks of 8 (a last one of 4),
// pixels in blocks of 8, the pixels past the last whole block by the plain loops.
DTNN_DIRECT_TRANSPOSE_TARGET inline void pixels_to_planes_avx(const float* pixels, std::int64_t w,
                                                              std::int64_t P, float* planes,
                                                              std::int64_t plane) {
  const std::int64_t whole = w - w % 8;
  for (std::int64_t p0 = 0; p0 < P; p0 += 8) {
    const bool half = P - p0 == 4;
    for (std::int64_t q0 = 0; q0 < whole; q0 += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) {
        const float* src = pixels + (q0 + i) * P + p0;
        r[i] = half ? _mm256_zextps128_ps256(_mm_loadu_ps(src)) : _mm256_loadu_ps(src);
      }
      transpose8x8(r);
      for (int j = 0; j < (half ? 4 : 8); ++j)
        _mm256_storeu_ps(planes + (p0 + j) * plane + q0, r[j]);
    }
  }
  for (std::int64_t q = whole; q < w; ++q)
    for (std::int64_t p = 0; p < P; ++p) planes[p * plane + q] = pixels[q * P + p];
}

// planes_to_pixels for float and P a multiple of 4, in the same blocks.
DTNN_DIRECT_TRANSPOSE_TARGET inline void planes_to_pixels_avx(const float* planes,
                                                              std::int64_t plane, std::int64_t w,
                                                              std::int64_t P, float* pixels) {
  const std::int64_t whole = w - w % 8;
  for (std::int64_t p0 = 0; p0 < P; p0 += 8) {
    const bool half = P - p0 == 4;
    for (std::int64_t q0 = 0; q0 < whole; q0 += 8) {
      __m256 r[8];
      for (int j = 0; j < 8; ++j)
        r[j] =
            j < 4 || !half ? _mm256_loadu_ps(planes + (p0 + j) * plane + q0) : _mm256_setzero_ps();
      transpose8x8(r);
      for (int i = 0; i < 8; ++i) {
        float* dst = pixels + (q0 + i) * P + p0;
        if (half)
          _mm_storeu_ps(dst, _mm256_castps256_ps128(r[i]));
        else
          _mm256_storeu_ps(dst, r[i]);
      }
    }
  }
  for (std::int64_t q = whole; q < w; ++q)
    for (std::int64_t p = 0; p < P; ++p) pixels[q * P + p] = planes[p * plane + q];
}

#endif  // DTNN_DIRECT_TRANSPOSE_AVX

// f.template operator()<P_>() with P_ = P where a compile-time count fits (the plain loops' strided
// moves then vectorise somewhat), else P_ = 0 (any count).
template <class F>
void with_planes(std::int64_t P, F&& f) {
  switch (P) {
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    case 4:
      return f.template operator()<4>();
    case 8:
      return f.template operator()<8>();
    default:
      return f.template operator()<0>();
  }
}

// The moves the engine makes: the AVX ones where this build has them and they apply.
template <class T>
void pixels_to_planes(const T* pixels, std::int64_t w, std::int64_t P, T* planes,
                      std::int64_t plane) {
#if defined(DTNN_DIRECT_TRANSPOSE_AVX) && defined(__AVX__)
  if constexpr (std::is_same_v<T, float>)
    if (P % 4 == 0) return pixels_to_planes_avx(pixels, w, P, planes, plane);
#endif
  with_planes(P, [&]<int P_>() { pixels_to_planes_plain<P_>(pixels, w, P, planes, plane); });
}

template <class T>
void planes_to_pixels(const T* planes, std::int64_t plane, std::int64_t w, std::int64_t P,
                      T* pixels) {
#if defined(DTNN_DIRECT_TRANSPOSE_AVX) && defined(__AVX__)
  if constexpr (std::is_same_v<T, float>)
    if (P % 4 == 0) return planes_to_pixels_avx(planes, plane, w, P, pixels);
#endif
  with_planes(P, [&]<int P_>() { planes_to_pixels_plain<P_>(planes, plane, w, P, pixels); });
}

}  // namespace dtnn::direct
