// topk: of a bucket's n values, the k = ceil(density x n) largest in magnitude, sent as (index,
// value) pairs: 8 k bytes against float32's 4 n. With error feedback (the exchange's) what a step
// leaves out is added to the next, so every gradient is applied eventually (PyDTNN 3.x's Ok-Topk
// optimizers study such sparse exchanges; its --optimizer-density is `density`). Averaging weights
// through it would drop most of them: model averaging goes plain.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/error.hpp"
#include "dtnn/plugin_api.hpp"
#include "sparse_pairs.hpp"

namespace {

using namespace dtnn;

class TopK final : public Codec {
 public:
  explicit TopK(const Params& p) : density_(p.get_double("density")) {
    if (!(density_ > 0 && density_ <= 1)) p.fail("density", "a fraction in (0, 1]");
  }

  std::size_t k(std::size_t n) const {
    if (n == 0) return 0;
    return std::clamp<std::size_t>(
        static_cast<std::size_t>(std::ceil(density_ * static_cast<double>(n))), 1, n);
  }

  std::size_t payload_bytes(std::size_t n) const override { return codecs::kPairBytes * k(n); }

  void encode(std::span<const float> x, std::span<unsigned char> payload) const override {
    const std::size_t n = x.size(), keep = k(n);
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    auto larger = [&](std::uint32_t a, std::uint32_t b) {
      const float fa = std::abs(x[a]), fb = std::abs(x[b]);
      return fa > fb || (fa == fb && a < b);  // ties by index: the same choice on every run
    };
    if (keep < n) std::nth_element(order.begin(), order.begin() + keep, order.end(), larger);
    std::sort(order.begin(), order.begin() + keep);  // ascending indices: decode walks forward
    for (std::size_t j = 0; j < keep; ++j)
      codecs::write_pair(payload.data() + codecs::kPairBytes * j, {order[j], x[order[j]]});
  }

  void decode_add(std::span<const unsigned char> payload, std::span<float> out,
                  float scale) const override {
    const std::size_t keep = k(out.size());
    for (std::size_t j = 0; j < keep; ++j) {
      const codecs::Pair p = codecs::read_pair(payload.data() + codecs::kPairBytes * j);
      if (p.index >= out.size())  // a peer's payload: checked, never trusted
        throw Error("topk: a payload's index " + std::to_string(p.index) + " is beyond its " +
                    std::to_string(out.size()) + " values (a peer with another model?)");
      out[p.index] += scale * p.value;
    }
  }

  // The k largest of n keep at least k / n of the squared norm.
  double contraction(std::size_t n) const override {
    return n == 0 ? 1.0 : static_cast<double>(k(n)) / static_cast<double>(n);
  }

  bool carries_weights() const override { return false; }

 private:
  double density_;
};

Plugin* create(const Params& p, const PluginContext&) { return new TopK(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "codec", .name = "topk",
                   .description = "the largest values of each bucket as (index, value) pairs",
                   .parameters = R"({"density": 0.01})",
                   .traits = R"({"conformance": [{"params": {"density": 0.01}},
                                                 {"params": {"density": 0.3}},
                                                 {"params": {"density": 1.0}}]})",
                   .factory = create)
