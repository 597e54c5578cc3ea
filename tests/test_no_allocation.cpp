// The steady-state training step allocates no memory. This binary replaces malloc and its kin
// (operator new calls malloc) with counting versions, warms the step up, then counts the heap
// allocations of 20 more steps, full and partial batches, in both layouts: simplecnn with each
// GEMM-based and direct convolution algorithm, and ResNet-20 (batchnorm, add blocks) with i2c, its
// activations saved in float32 and in bf16; with data augmentation on.
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "dtnn/config.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/registry.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
void count() {
  if (g_counting.load(std::memory_order_relaxed))
    g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(std::size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(std::size_t a, std::size_t b) {
  count();
  return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) {
  count();
  return __libc_realloc(p, n);
}
void* memalign(std::size_t a, std::size_t n) {
  count();
  return __libc_memalign(a, n);
}
void* aligned_alloc(std::size_t a, std::size_t n) {
  count();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, std::size_t a, std::size_t n) {
  count();
  *p = __libc_memalign(a, n);
  return *p ? 0 : 12;
}
void free(void* p) { __libc_free(p); }
}

int main() {
  dtnn::Registry registry({DTNN_TEST_PLUGIN_DIR});
  int failures = 0, runs = 0;
  struct Case {
    const char* model;
    std::vector<int> input;
    const char* algorithm;
    const char* saved_activations = "fp32";
  };
  const std::vector<Case> cases = {{"simplecnn", {28, 28, 1}, "i2c"},
                                   {"simplecnn", {28, 28, 1}, "implicit_gemm"},
                                   {"simplecnn", {28, 28, 1}, "direct"},
                                   {"resnet20_cifar10", {32, 32, 3}, "i2c"},
                                   {"resnet20_cifar10", {32, 32, 3}, "i2c", "bf16"}};
  for (const char* layout : {"NHWC", "NCHW"})
    for (const Case& c : cases) {
      const char* algorithm = c.algorithm;
      ++runs;
      nlohmann::json cfg = {{"model", c.model},
                            {"dataset",
                             {{"name", "synthetic"},
                              {"input_shape", c.input},
                              {"train_samples", 512},
                              {"augment_horizontal_flip", 0.5},
                              {"augment_random_crop", 0.5},
                              {"prefetch", true}}},
                            {"training",
                             {{"batch_size", 64},
                              {"tensor_format", layout},
                              {"saved_activations", c.saved_activations}}},
                            {"optimizer", {{"name", "adam"}}},
                            {"conv", {{"algorithm", algorithm}}},
                            {"output", {{"progress", "none"}}}};
      dtnn::Experiment e(dtnn::make_experiment(cfg, {}, "test"), registry);
      std::vector<std::int64_t> ids(64);
      std::iota(ids.begin(), ids.end(), 0);
      const std::span<const std::int64_t> full(ids), partial(ids.data(), 37);
      // Each step names the next, whose batch the loader makes in its thread meanwhile.
      auto two_steps = [&] {
        e.trainer().train_step(full, 1.0, false, partial);
        e.trainer().train_step(partial, 1.0, false, full);
      };
      for (int i = 0; i < 3; ++i) two_steps();
      g_allocations = 0;
      g_counting = true;
      for (int i = 0; i < 10; ++i) two_steps();
      g_counting = false;
      const long n = g_allocations.load();
      std::printf("%s %s %s, %s activations: %ld heap allocations in 20 steady-state steps\n",
                  c.model, layout, algorithm, c.saved_activations, n);
      if (n != 0) ++failures;
    }
  std::printf("%d passed, %d failed\n", runs - failures, failures);
  return failures ? 1 : 0;
}
