// The dense product of the twins that project rows of features (fc, attention's projections,
// patch_embedding), the GPU's dtnn/dense.hpp: row-major matrices, weights [width, cols] as the CPU
// layers keep them, through cuBLAS (cublas_gemm.hpp spells out the column-major view) on the
// context's stream.
#pragma once
#include <cstdint>

#include "context.hpp"
#include "cublas_gemm.hpp"
#include "kernels.hpp"

namespace dtnn::cuda::dense {

// out [rows, cols] = in [rows, width] w (+ b; b null: no bias).
inline void forward(DType dtype, const void* in, std::int64_t rows, std::int64_t width,
                    const void* w, std::int64_t cols, const void* b, void* out) {
  Context& cx = Context::get();
  // out^T [cols, rows] = w^T in^T
  gemm(cx.cublas(), dtype, CUBLAS_OP_N, CUBLAS_OP_N, cols, rows, width, 1.0, w, cols, in, width,
       0.0, out, cols);
  if (b) kernels::add_bias_rows(cx.stream(), out, b, rows, cols, dtype);
}

// dw += in^T g;  db += the column sums of g (db null: no bias);  din = g w^T (din null: none),
// or din += g w^T when accumulate_input_gradient (several readers of one input).
inline void backward(DType dtype, const void* in, const void* g, std::int64_t rows,
                     std::int64_t width, const void* w, std::int64_t cols, void* dw, void* db,
                     void* din, bool accumulate_input_gradient = false) {
  Context& cx = Context::get();
  // dw^T [cols, width] += g^T [cols, rows] in [rows, width]
  gemm(cx.cublas(), dtype, CUBLAS_OP_N, CUBLAS_OP_T, cols, width, rows, 1.0, g, cols, in, width,
       1.0, dw, cols);
  if (db) kernels::add_column_sums(cx.stream(), db, g, rows, cols, dtype);
  // din^T [width, rows] = w [width, cols] g^T [cols, rows]
  if (din)
    gemm(cx.cublas(), dtype, CUBLAS_OP_T, CUBLAS_OP_N, width, rows, cols, 1.0, w, cols, g, cols,
         accumulate_input_gradient ? 1.0 : 0.0, din, width);
}

}  // namespace dtnn::cuda::dense
