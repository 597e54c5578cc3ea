// synthetic: random samples for smoke tests and throughput benchmarks. Sample i of a split is a
// pure function of (seed, split, i): values uniform in [0, 1), label uniform over the classes.
// Nothing is stored, so any size costs no memory.
#include <algorithm>
#include <cstdint>

#include "dtnn/dataset.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/rng.hpp"
#include "one_hot.hpp"

namespace {

using namespace dtnn;

class Synthetic final : public Dataset {
 public:
  explicit Synthetic(const Params& p)
      : classes_(p.get_int("classes")), seed_(static_cast<std::uint64_t>(p.get_int("seed"))) {
    std::vector<std::int64_t> s = p.get_ints("input_shape");
    if (s.empty() || s.size() > 3 || *std::min_element(s.begin(), s.end()) < 1)
      p.fail("input_shape", "1 to 3 positive integers (H, W, C)");
    for (auto d : s) hwc_.push_back(d);
    if (classes_ < 2) p.fail("classes", "an integer >= 2");
    sizes_[0] = p.get_int("train_samples");
    sizes_[1] = p.get_int("test_samples");
    if (sizes_[0] < 0) p.fail("train_samples", "an integer >= 0");
    if (sizes_[1] < 0) p.fail("test_samples", "an integer >= 0");
  }

  Shape sample_shape(Layout layout) const override {
    if (layout == Layout::nchw && hwc_.rank() == 3) return Shape{hwc_[2], hwc_[0], hwc_[1]};
    return hwc_;
  }
  std::int64_t num_classes() const override { return classes_; }
  std::int64_t size(Split s) const override { return sizes_[static_cast<int>(s)]; }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t m = hwc_.numel();
      T* xp = x.data<T>();
      parallel_for(static_cast<std::int64_t>(indices.size()), 4, [&](std::int64_t i) {
        Rng rng(Rng::derive(seed_ * 2 + static_cast<std::uint64_t>(s),
                            static_cast<std::uint64_t>(indices[static_cast<std::size_t>(i)])));
        for (std::int64_t j = 0; j < m; ++j) xp[i * m + j] = static_cast<T>(rng.uniform());
        const std::int64_t label =
            static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(classes_)));
        datasets::write_one_hot<T>(y, i, label);
      });
    });
  }

 private:
  Shape hwc_;
  std::int64_t classes_;
  std::uint64_t seed_;
  std::int64_t sizes_[2] = {0, 0};
};

Plugin* create(const Params& p, const PluginContext&) { return new Synthetic(p); }

}  // namespace

DTNN_PLUGIN(
    "dataset", "synthetic", "random samples of any shape (for tests and benchmarks)",
    R"({"input_shape": [28, 28, 1], "classes": 10, "train_samples": 1024, "test_samples": 256,
                "seed": 0})",
    create)
