#include "int8_conv2d.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "dtnn/parallel.hpp"

namespace dtnn::int8_conv2d {

std::vector<float> weight_matrix(const ConvGeometry& g, const float* w) {
  const FilterStrides f = filter_strides(g);  // NHWC [KH, KW, C, K], NCHW [K, C, KH, KW]
  std::vector<float> m(static_cast<std::size_t>(g.kh * g.kw * g.c * g.k));
  for (std::int64_t ky = 0; ky < g.kh; ++ky)
    for (std::int64_t kx = 0; kx < g.kw; ++kx)
      for (std::int64_t c = 0; c < g.c; ++c)
        for (std::int64_t k = 0; k < g.k; ++k)
          m[static_cast<std::size_t>(((ky * g.kw + kx) * g.c + c) * g.k + k)] =
              w[ky * f.y + kx * f.x + c * f.c + k * f.k];
  return m;
}

namespace {

// Bytes the kernels may read past the coded image's end (a run's last group of four).
constexpr std::int64_t kSlack = 16;

// With a horizontal dilation: one row of lda bytes per output pixel, run ky of its window at
// ky * run_bytes (kx, c order), read from the bordered image.
void unfold(const ConvGeometry& g, const std::uint8_t* image, std::int64_t image_w,
            std::int64_t run_bytes, std::uint8_t* rows, std::int64_t lda) {
  const std::int64_t ho = g.ho(), wo = g.wo();
  for (std::int64_t oy = 0; oy < ho; ++oy)
    for (std::int64_t ox = 0; ox < wo; ++ox) {
      std::uint8_t* row = rows + (oy * wo + ox) * lda;
      for (std::int64_t ky = 0; ky < g.kh; ++ky) {
        const std::int64_t iy = oy * g.stride_h + ky * g.dilation_h;
        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
          const std::int64_t ix = ox * g.stride_w + kx * g.dilation_w;
          std::memcpy(row + ky * run_bytes + kx * g.c, image + (iy * image_w + ix) * g.c,
                      static_cast<std::size_t>(g.c));
        }
      }
    }
}

}  // namespace

void Runner::forward(const ConvGeometry& g, const Int8Product& product, const Tensor& x,
                     const float* bias, bool relu, Tensor& y) {
  const std::int64_t ho = g.ho(), wo = g.wo(), pixels = ho * wo;
  const std::int64_t image_h = g.h + 2 * g.pad_h, image_w = g.w + 2 * g.pad_w;
  const std::int64_t plane = g.h * g.w, sample_in = plane * g.c, sample_out = pixels * g.k;
  const std::int64_t run_bytes = product.segment_bytes();
  const bool nhwc = g.layout == Layout::nhwc, windows = g.dilation_w != 1;
  // One scratch per thread that may run (more if the thread count grew since the last batch).
  if (threads_.size() < static_cast<std::size_t>(omp_get_max_threads())) {
    const std::size_t had = threads_.size();
    threads_.resize(static_cast<std::size_t>(omp_get_max_threads()));
    for (std::size_t t = had; t < threads_.size(); ++t) {
      Scratch& s = threads_[t];
      // The border stays coded zero; the interior is rewritten by every sample.
      s.image.assign(static_cast<std::size_t>(image_h * image_w * g.c + kSlack),
                     Int8Product::kZeroCode);
      if (windows)
        s.rows.assign(static_cast<std::size_t>(pixels * product.padded_k()),
                      Int8Product::kZeroCode);
      if (!nhwc) {
        s.out.resize(static_cast<std::size_t>(sample_out));
        s.row_codes.resize(static_cast<std::size_t>(g.w));
      }
    }
  }
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  parallel_for(x.dim(0), 2, [&](std::int64_t s) {
    Scratch& t = threads_[static_cast<std::size_t>(omp_get_thread_num())];
    std::uint8_t* image = t.image.data();
    const float* in = xp + s * sample_in;
    const std::int64_t row_bytes = g.w * g.c;
    for (std::int64_t iy = 0; iy < g.h; ++iy) {
      std::uint8_t* to = image + ((iy + g.pad_h) * image_w + g.pad_w) * g.c;
      if (nhwc) {
        product.encode(in + iy * row_bytes, row_bytes, to);
        continue;
      }
      for (std::int64_t c = 0; c < g.c; ++c) {  // NCHW: a row of each channel, interleaved
        std::uint8_t* codes = t.row_codes.data();
        product.encode(in + c * plane + iy * g.w, g.w, codes);
        for (std::int64_t ix = 0; ix < g.w; ++ix) to[ix * g.c + c] = codes[ix];
      }
    }
    float* out = nhwc ? yp + s * sample_out : t.out.data();
    if (windows) {
      unfold(g, image, image_w, run_bytes, t.rows.data(), product.padded_k());
      product.run(pixels, product.rows(t.rows.data(), product.padded_k()), bias, relu, out, g.k);
    } else {
      for (std::int64_t oy = 0; oy < ho; ++oy) {
        const Int8Rows rows{image + oy * g.stride_h * image_w * g.c, g.stride_w * g.c, g.kh,
                            run_bytes / 4, g.dilation_h * image_w * g.c};
        product.run(wo, rows, bias, relu, out + oy * wo * g.k, g.k);
      }
    }
    if (nhwc) return;
    float* dst = yp + s * sample_out;
    for (std::int64_t k = 0; k < g.k; ++k)
      for (std::int64_t p = 0; p < pixels; ++p) dst[k * pixels + p] = out[p * g.k + k];
  });
}

}  // namespace dtnn::int8_conv2d
