// multiplication: the matrix product of two parallel paths' outputs (PyDTNN 3.x's Multiplication,
// attention's Q K^T and A V), batched over the samples and any leading axes. With per-sample
// shapes A = [..., m, k] and B = [..., k, n] (B = [..., n, k] with "transpose_b": true):
//   Y = A B (or A B^T),  [..., m, n]
//   dA = dY B^T (dY B),  dB = A^T dY (dY^T A)
// An empty path is the identity: {"type": "multiplication", "paths": [[...], []]} multiplies a
// path's output by the block's input.
#include <string>

#include "dtnn/block_layer.hpp"
#include "dtnn/error.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

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
    products(
        y.dim(0),
        [&](auto* a, auto* b, auto* c, std::int64_t i) {
          gemm(false, transpose_b_, d.m, d.n, d.k, 1, a + i * d.m * d.k, d.k, b + i * d.k * d.n,
               transpose_b_ ? d.k : d.n, 0, c + i * d.m * d.n, d.n);
        },
        *outputs[0], *outputs[1], y);
  }

  // dA = dY B^T (B^T: dY B), into buffer for path 0; dB = A^T dY (B^T: dY^T A) for path 1.
  const Tensor& share(const Tensor& dy, std::size_t p, Tensor& buffer) const override {
    const Dims d = dims();
    const Tensor &a = *path_outputs()[0], &b = *path_outputs()[1];
    if (p == 0) {
      products(
          dy.dim(0),
          [&](auto* g, auto* bp, auto* out, std::int64_t i) {
            gemm(false, !transpose_b_, d.m, d.k, d.n, 1, g + i * d.m * d.n, d.n, bp + i * d.k * d.n,
                 transpose_b_ ? d.k : d.n, 0, out + i * d.m * d.k, d.k);
          },
          dy, b, buffer);
    } else if (transpose_b_) {
      products(
          dy.dim(0),
          [&](auto* g, auto* ap, auto* out, std::int64_t i) {
            gemm(true, false, d.n, d.k, d.m, 1, g + i * d.m * d.n, d.n, ap + i * d.m * d.k, d.k, 0,
                 out + i * d.n * d.k, d.k);
          },
          dy, a, buffer);
    } else {
      products(
          dy.dim(0),
          [&](auto* ap, auto* g, auto* out, std::int64_t i) {
            gemm(true, false, d.k, d.n, d.m, 1, ap + i * d.m * d.k, d.k, g + i * d.m * d.n, d.n, 0,
                 out + i * d.k * d.n, d.n);
          },
          a, dy, buffer);
    }
    return buffer;
  }
  bool shares_need_buffers() const override { return true; }

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

  // f(x, w, out, i) for each of the batch's products i, in the tensors' dtype.
  template <class F>
  void products(std::int64_t batch, F f, const Tensor& x, const Tensor& w, Tensor& out) const {
    const std::int64_t count = batch * dims().per_sample;
    dispatch_dtype(out.dtype(), [&](auto z) {
      using T = decltype(z);
      for (std::int64_t i = 0; i < count; ++i) f(x.data<T>(), w.data<T>(), out.data<T>(), i);
    });
  }

  bool transpose_b_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Multiplication(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp): a
// sequence's [T, D] times its own transpose, and products batched over a leading axis.
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"paths": [[{"type": "layer_norm"}], []], "transpose_b": true}, "input": [5, 4]},
    {"params": {"paths": [[{"type": "tanh"}], [{"type": "sigmoid"}]], "transpose_b": false}, "input": [3, 3, 3]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "multiplication",
                   .description =
                       "matrix product of two parallel paths' outputs over their last two axes "
                       "(attention's Q K^T; transpose_b multiplies by the transpose)",
                   .parameters = R"({"paths": [[], []], "transpose_b": false})", .traits = kTraits,
                   .factory = create)
