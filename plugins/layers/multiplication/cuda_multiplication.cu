// cuda_multiplication: the multiplication block (multiplication.hpp, the CPU plugin's own class)
// with cuBLAS's strided batches for its products and cuDNN's sum for the paths' input gradients;
// its paths build the layers' twins.
#include "cublas_gemm.hpp"
#include "cuda_merge_blocks.hpp"
#include "cuda_plugin.hpp"
#include "multiplication.hpp"
#include "multiplication_parameters.hpp"

namespace {

using namespace dtnn;

// Row-major C_i = op(A_i) op(B_i) is column-major C_i^T = op(B_i)^T op(A_i)^T: cuBLAS on (B, A).
struct DeviceGemms {
  static void batched(DType dtype, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      const void* a, std::int64_t lda, std::int64_t sa, const void* b,
                      std::int64_t ldb, std::int64_t sb, void* c, std::int64_t ldc, std::int64_t sc,
                      std::int64_t count) {
    if (count == 0) return;
    cuda::gemm_batched(cuda::Context::get().cublas(), dtype, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                       ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, 1.0, b, ldb, sb, a, lda, sa, 0.0, c,
                       ldc, sc, count);
  }
  static void add_into(Tensor& a, const Tensor& b) { cuda::add_into(a, b); }
};

Plugin* create(const Params& p, const PluginContext&) { return new Multiplication<DeviceGemms>(p); }

}  // namespace

// The CPU plugin's cases: a sequence times its own transpose, products over a leading axis.
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"paths": [[{"type": "layer_norm"}], []], "transpose_b": true}, "input_nchw": [5, 4]},
    {"params": {"paths": [[{"type": "tanh"}], [{"type": "sigmoid"}]]}, "input_nchw": [3, 3, 3]}]})";

DTNN_CUDA_LAYER("multiplication",
                "matrix product of two parallel paths' outputs on an NVIDIA GPU (cuBLAS)",
                dtnn::layer_parameters::kMultiplicationParameters, kTwinChecks, create)
