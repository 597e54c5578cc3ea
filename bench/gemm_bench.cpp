// gemm_bench: dtnn::gemm in each precision on the products of training (fc layers, i2c's three
// passes), alternating the precisions within each round, medians of --rounds; GFLOPS and the
// ratio to float32, one table row per shape.
//   gemm_bench [--rounds 7 --min-ms 60 --shapes M,N,K[,ta,tb];...]
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "dtnn/gemm.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/tensor.hpp"

namespace po = boost::program_options;

namespace {

struct Shape {
  std::int64_t m, n, k;
  bool ta = false, tb = false;
  std::string what;
};

// Products a CIFAR ResNet and an MLP train with (batch 64): i2c forward (cols x w), backward-data
// (dy x w^T), backward-filter (cols^T x dy), and fc's forward.
std::vector<Shape> default_shapes() {
  return {{65536, 16, 144, false, false, "resnet20 32x32x16 3x3 fwd"},
          {16384, 32, 288, false, false, "resnet20 16x16x32 3x3 fwd"},
          {4096, 64, 576, false, false, "resnet20 8x8x64 3x3 fwd"},
          {4096, 576, 64, false, true, "resnet20 8x8x64 3x3 bwd-data"},
          {576, 64, 4096, true, false, "resnet20 8x8x64 3x3 bwd-filter"},
          {64, 512, 784, false, false, "mlp 784-512 fwd"},
          {1024, 1024, 1024, false, false, "square 1024"}};
}

double seconds(auto&& f, double min_ms) {
  int reps = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    f();
    ++reps;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed * 1e3 < min_ms);
  return elapsed / reps;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  double min_ms = 60;
  std::string shapes_text;
  po::options_description desc("gemm_bench options");
  desc.add_options()("help,h", "help")("rounds", po::value(&rounds), "alternating rounds")(
      "min-ms", po::value(&min_ms), "time per measurement")(
      "shapes", po::value(&shapes_text), "M,N,K[,ta,tb];... instead of the default list");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_bench: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::printf("usage: gemm_bench [options]\n");
    return 0;
  }
  dtnn::initialize_runtime();
  std::vector<Shape> shapes = default_shapes();
  if (!shapes_text.empty()) {
    shapes.clear();
    std::stringstream list(shapes_text);
    std::string item;
    while (std::getline(list, item, ';')) {
      Shape s{};
      int ta = 0, tb = 0;
      if (std::sscanf(item.c_str(), "%ld,%ld,%ld,%d,%d", &s.m, &s.n, &s.k, &ta, &tb) < 3) {
        std::fprintf(stderr, "gemm_bench: --shapes entry '%s' is not M,N,K[,ta,tb]\n",
                     item.c_str());
        return 2;
      }
      s.ta = ta != 0, s.tb = tb != 0, s.what = item;
      shapes.push_back(s);
    }
  }
  std::printf("bf16: %s; fp16: %s\n", dtnn::lowp_gemm_path(dtnn::Precision::bf16),
              dtnn::lowp_gemm_path(dtnn::Precision::fp16));
  std::printf(
      "| product | M x N x K | fp32 GFLOPS | bf16 GFLOPS | fp16 GFLOPS | bf16/fp32 | fp16/fp32 "
      "|\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  const dtnn::Precision precisions[] = {dtnn::Precision::fp32, dtnn::Precision::bf16,
                                        dtnn::Precision::fp16};
  for (const Shape& s : shapes) {
    // 64-byte aligned, as a layer's tensors are: with std::vector's 16 bytes a row of C could
    // straddle cache lines in one list and not in the next, and the same product measured 15-25%
    // apart depending on its place in --shapes.
    dtnn::Rng rng(1);
    dtnn::Tensor ta = dtnn::Tensor::empty(dtnn::Shape{s.m * s.k}, dtnn::DType::float32),
                 tb = dtnn::Tensor::empty(dtnn::Shape{s.k * s.n}, dtnn::DType::float32),
                 tc = dtnn::Tensor::zeros(dtnn::Shape{s.m * s.n}, dtnn::DType::float32);
    float *a = ta.data<float>(), *b = tb.data<float>(), *c = tc.data<float>();
    for (std::int64_t i = 0; i < s.m * s.k; ++i) a[i] = static_cast<float>(rng.uniform(-1, 1));
    for (std::int64_t i = 0; i < s.k * s.n; ++i) b[i] = static_cast<float>(rng.uniform(-1, 1));
    const std::int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    auto product = [&](int p) {
      dtnn::gemm(precisions[p], s.ta, s.tb, s.m, s.n, s.k, 1.0f, a, lda, b, ldb, 0.0f, c, s.n);
    };
    // Untimed first: each path's buffers (BLIS's packing pool, the low-precision copies) are
    // allocated on the first call of a shape, and the list's first shape measured low without it.
    for (int p = 0; p < 3; ++p) seconds([&] { product(p); }, min_ms);
    std::vector<double> times[3];
    for (int round = 0; round < rounds; ++round)
      for (int p = 0; p < 3; ++p) times[p].push_back(seconds([&] { product(p); }, min_ms));
    const double flops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    double gflops[3];
    for (int p = 0; p < 3; ++p) gflops[p] = flops / median(times[p]) * 1e-9;
    std::printf("| %s | %ldx%ldx%ld%s%s | %.1f | %.1f | %.1f | %.2f | %.2f |\n", s.what.c_str(),
                s.m, s.n, s.k, s.ta ? " A^T" : "", s.tb ? " B^T" : "", gflops[0], gflops[1],
                gflops[2], gflops[1] / gflops[0], gflops[2] / gflops[0]);
  }
  return 0;
}
