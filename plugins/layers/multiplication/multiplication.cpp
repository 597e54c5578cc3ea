// multiplication: the matrix product of two parallel paths' outputs (PyDTNN 3.x's Multiplication,
// attention's Q K^T and A V), batched over the samples and any leading axes. With per-sample
// shapes A = [..., m, k] and B = [..., k, n] (B = [..., n, k] with "transpose_b": true):
//   Y = A B (or A B^T),  [..., m, n]
//   dA = dY B^T (dY B),  dB = A^T dY (dY^T A)
// An empty path is the identity: {"type": "multiplication", "paths": [[...], []]} multiplies a
// path's output by the block's input.
#include "multiplication.hpp"

#include <string>

#include "dtnn/gemm.hpp"
#include "dtnn/plugin_api.hpp"
#include "multiplication_parameters.hpp"

namespace {

using namespace dtnn;

// The host's batched GEMM: one BLIS product after another.
struct HostGemms {
  static void batched(DType dtype, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      const void* a, std::int64_t lda, std::int64_t sa, const void* b,
                      std::int64_t ldb, std::int64_t sb, void* c, std::int64_t ldc, std::int64_t sc,
                      std::int64_t count) {
    dispatch_dtype(dtype, [&](auto z) {
      using T = decltype(z);
      const T *ap = static_cast<const T*>(a), *bp = static_cast<const T*>(b);
      T* cp = static_cast<T*>(c);
      for (std::int64_t i = 0; i < count; ++i)
        gemm(ta, tb, m, n, k, T(1), ap + i * sa, lda, bp + i * sb, ldb, T(0), cp + i * sc, ldc);
    });
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Multiplication<HostGemms>(p); }

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
                   .parameters = dtnn::layer_parameters::kMultiplicationParameters,
                   .traits = kTraits, .factory = create)
