// Multiplication<Gemms>: the multiplication block (multiplication.cpp has the formulas) for the
// CPU plugin and its CUDA twin alike: the paths and their gradients are BlockLayer's, the products
// Gemms's batched row-major GEMM over the samples and leading axes,
//   Gemms::batched(dtype, trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b,
//                  c, ldc, stride_c, count):  C_i = op(A_i) op(B_i), i < count
// (BLIS on the host, cuBLAS's strided batches on the GPU), and where Gemms has one,
//   Gemms::add_into(a, b):  a += b  (the paths' input gradients summed on the device)
#pragma once
#include <string>
#include <vector>

#include "dtnn/block_layer.hpp"
#include "dtnn/error.hpp"

namespace dtnn {

template <class Gemms>
class Multiplication final : public BlockLayer {
 public:
  explicit Multiplication(const Params& p)
      : BlockLayer(p), transpose_b_(p.get_bool("transpose_b")) {}
  std::string type() const override { return "multiplication"; }

 protected:
  Shape merged_shape(const std::vector<Shape>& paths) const override {
    auto fail = [&](const std::string& why) {
      throw Error("multiplication: " + why + " (paths give " +
                  (paths.empty() ? std::string("nothing") : paths[0].str()) +
                  (paths.size() > 1 ? " and " + paths[1].str() : std::string()) + ")");
    };
    if (paths.size() != 2) fail("expected two paths, got " + std::to_string(paths.size()));
    const Shape &a = paths[0], &b = paths[1];
    if (a.rank() < 2 || a.rank() != b.rank())
      fail("expected two outputs of the same rank, at least 2 ([..., rows, columns])");
    const int r = a.rank();
    for (int i = 0; i + 2 < r; ++i)
      if (a[i] != b[i]) fail("the leading axes differ");
    const std::int64_t b_inner = transpose_b_ ? b[r - 1] : b[r - 2];
    if (a[r - 1] != b_inner)
      fail("path 0's columns (" + std::to_string(a[r - 1]) + ") are not path 1's " +
           (transpose_b_ ? "columns" : "rows") + " (" + std::to_string(b_inner) + ")");
    Shape y = a;
    y[r - 1] = transpose_b_ ? b[r - 2] : b[r - 1];
    return y;
  }

  void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const override {
    const Dims d = dims();
    Gemms::batched(y.dtype(), false, transpose_b_, d.m, d.n, d.k, outputs[0]->raw(), d.k, d.m * d.k,
                   outputs[1]->raw(), transpose_b_ ? d.k : d.n, d.k * d.n, y.raw(), d.n, d.m * d.n,
                   y.dim(0) * d.per_sample);
  }

  // dA = dY B^T (B^T: dY B), into buffer for path 0; dB = A^T dY (B^T: dY^T A) for path 1.
  const Tensor& share(const Tensor& dy, std::size_t p, Tensor& buffer) const override {
    const Dims d = dims();
    const Tensor &a = *path_outputs()[0], &b = *path_outputs()[1];
    const std::int64_t count = dy.dim(0) * d.per_sample;
    if (p == 0)
      Gemms::batched(dy.dtype(), false, !transpose_b_, d.m, d.k, d.n, dy.raw(), d.n, d.m * d.n,
                     b.raw(), transpose_b_ ? d.k : d.n, d.k * d.n, buffer.raw(), d.k, d.m * d.k,
                     count);
    else if (transpose_b_)
      Gemms::batched(dy.dtype(), true, false, d.n, d.k, d.m, dy.raw(), d.n, d.m * d.n, a.raw(), d.k,
                     d.m * d.k, buffer.raw(), d.k, d.n * d.k, count);
    else
      Gemms::batched(dy.dtype(), true, false, d.k, d.n, d.m, a.raw(), d.k, d.m * d.k, dy.raw(), d.n,
                     d.m * d.n, buffer.raw(), d.n, d.k * d.n, count);
    return buffer;
  }
  bool shares_need_buffers() const override { return true; }
  void accumulate(Tensor& a, const Tensor& b) const override {
    if constexpr (requires { Gemms::add_into(a, b); })
      Gemms::add_into(a, b);
    else
      BlockLayer::accumulate(a, b);
  }

 private:
  struct Dims {
    std::int64_t m, k, n, per_sample;  // per_sample: products per sample (the leading axes)
  };
  Dims dims() const {
    const Shape& a = path_shapes()[0];
    const int r = a.rank();
    const Shape& y = output_shape();
    return {a[r - 2], a[r - 1], y[r - 1], a.numel() / (a[r - 2] * a[r - 1])};
  }

  bool transpose_b_;
};

}  // namespace dtnn
