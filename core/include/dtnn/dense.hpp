// The affine map of rows that fc, attention's projections and patch_embedding share, on the host:
//   forward:   y[r, :] = x[r, :] w + b                      x: [rows, in], w: [in, out], b: [out]
//   backward:  dw += x^T g,  db += the column sums of g,  dx = g w^T (when dx is not null)
// b and db may be null (no bias). Row-major, through dtnn::gemm, whose products run in `precision`
// (the sums of db stay in T).
#pragma once
#include <algorithm>
#include <cstdint>

#include "dtnn/gemm.hpp"
#include "dtnn/parallel.hpp"

namespace dtnn::dense {

template <class T>
void forward(const T* x, std::int64_t rows, std::int64_t in, const T* w, std::int64_t out,
             const T* b, T* y, Precision precision = Precision::fp32) {
  if (b) parallel_for(rows, 64, [&](std::int64_t r) { std::copy_n(b, out, y + r * out); });
  gemm(precision, false, false, rows, out, in, T(1), x, in, w, out, b ? T(1) : T(0), y, out);
}

template <class T>
void backward(const T* x, const T* g, std::int64_t rows, std::int64_t in, const T* w,
              std::int64_t out, T* dw, T* db, T* dx, Precision precision = Precision::fp32) {
  gemm(precision, true, false, in, out, rows, T(1), x, in, g, out, T(1), dw, out);
  if (db) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* __restrict gr = g + r * out;
      T* __restrict sums = db;
      for (std::int64_t j = 0; j < out; ++j) sums[j] += gr[j];
    }
  }
  if (dx) gemm(precision, false, true, rows, in, out, T(1), g, out, w, out, T(0), dx, in);
}

}  // namespace dtnn::dense
