// secagg: secure aggregation. Each value goes as a 64-bit fixed-point word (x * 2^fraction_bits,
// rounded), and each rank adds its pairwise masks (pairwise_masks.hpp) to its words before they
// leave, so what crosses the wire, and what rank 0 or a broker relays, is uniformly random to
// whoever lacks the pair keys; the masks cancel in the ranks' sum modulo 2^64, which is bit for bit
// the sum of the unmasked words. Two more words count the values a rank could not carry (not
// finite, or beyond +-2^(62 - fraction_bits) / ranks, where the sum could overflow) and set the
// bit of each rank that had one: then every value of the sum decodes to NaN, which the run's
// non-finite policy meets, and rank 0 says which ranks sent what. The threat model is in
// docs/federated.md.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "pairwise_masks.hpp"
#include "rank_bits.hpp"

namespace {

using namespace dtnn;
using dtnn_secagg::PairwiseMasks;

static_assert(std::endian::native == std::endian::little, "payload words are little-endian");

class SecAgg final : public Codec {
 public:
  explicit SecAgg(const Params& p) : fraction_bits_(static_cast<int>(p.get_int("fraction_bits"))) {
    if (fraction_bits_ < 16 || fraction_bits_ > 48)
      p.fail("fraction_bits", "an integer from 16 to 48 (the fixed point's fraction bits)");
  }

  std::size_t payload_bytes(std::size_t n) const override { return 8 * (n + 2); }

  void encode(std::span<const float> x, std::span<unsigned char> payload) const override {
    const double scale = std::ldexp(1.0, fraction_bits_), limit = largest();
    std::uint64_t refused = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double v = static_cast<double>(x[i]);
      std::int64_t q = 0;
      if (std::isfinite(v) && std::abs(v) <= limit) {
        q = std::llround(v * scale);
      } else {
        ++refused;
      }
      const auto word = static_cast<std::uint64_t>(q);  // two's complement
      std::memcpy(payload.data() + 8 * i, &word, 8);
    }
    const std::uint64_t who = refused == 0 ? 0 : dtnn_codecs::rank_bit(rank_);
    std::memcpy(payload.data() + 8 * x.size(), &refused, 8);
    std::memcpy(payload.data() + 8 * (x.size() + 1), &who, 8);
  }

  void decode_add(std::span<const unsigned char> payload, std::span<float> out,
                  float scale) const override {
    std::uint64_t refused, who;
    std::memcpy(&refused, payload.data() + 8 * out.size(), 8);
    std::memcpy(&who, payload.data() + 8 * (out.size() + 1), 8);
    if (refused != 0) {
      if (!warned_) say_refused(refused, who);
      for (float& o : out) o += std::nanf("");
      return;
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint64_t word;
      std::memcpy(&word, payload.data() + 8 * i, 8);
      const double v =
          std::ldexp(static_cast<double>(static_cast<std::int64_t>(word)), -fraction_bits_);
      out[i] += scale * static_cast<float>(v);
    }
  }

  // Rounding to 2^-(f+1) keeps |x - d| / |x| <= 2^(13 - f) for |x| >= 2^-14 (fp16's normal range).
  double contraction(std::size_t) const override {
    return 1.0 - std::ldexp(1.0, 2 * (13 - fraction_bits_));
  }

  Combination combination() const override { return Combination::add_words; }

  void join(Communicator& comm) override {
    rank_ = comm.rank();
    ranks_ = comm.size();
    masks_ = std::make_unique<PairwiseMasks>(comm);
  }

  void mask(std::span<unsigned char> payload, std::uint64_t round) const override {
    if (!masks_ || masks_->size() < 2) return;  // alone: nothing to hide the values from
    masks_->add_to(payload, round);
  }

  // The masks of this rank's pairs with the ranks that left: the sum of the present ranks' masks
  // is minus the sum of these over them. Sent in clear, a correction reveals what the absent
  // ranks' masks were to cancel: safe because their payloads were never received (an aggregator
  // that claims a rank left after receiving its payload could unmask it: docs/federated.md).
  void unmask(std::span<unsigned char> correction, std::uint64_t round,
              std::span<const int> absent) const override {
    if (!masks_ || masks_->size() < 2) return;
    masks_->add_pairs_to(correction, round, absent);
  }

 private:
  // The largest magnitude a rank may send: the sum of every rank's stays below 2^62.
  double largest() const { return std::ldexp(1.0, 62 - fraction_bits_) / ranks_; }

  // Once per run: how many values, from which ranks (a rank over 62 counts as rank 63 and up).
  void say_refused(std::uint64_t refused, std::uint64_t who) const {
    warned_ = true;
    const std::string ranks = dtnn_codecs::ranks_named(who);
    log_warning("secagg: " + std::to_string(refused) + " values from rank(s) " + ranks +
                " are not finite or beyond +-" + std::to_string(largest()) +
                " (parallel.codec.fraction_bits " + std::to_string(fraction_bits_) + ", " +
                std::to_string(ranks_) + " ranks): the sum they join is NaN (said once)");
  }

  int fraction_bits_;
  int rank_ = 0, ranks_ = 1;
  std::unique_ptr<PairwiseMasks> masks_;
  mutable bool warned_ = false;
};

Plugin* create(const Params& p, const PluginContext&) { return new SecAgg(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "codec", .name = "secagg",
                   .description =
                       "secure aggregation: fixed-point words under pairwise masks "
                       "(X25519, ChaCha20) that cancel in the ranks' sum",
                   .parameters = R"({"fraction_bits": 32})",
                   .traits = R"({"aliases": ["secure_aggregation"],
                                 "conformance": [{"params": {"fraction_bits": 32}},
                                                 {"params": {"fraction_bits": 16}},
                                                 {"params": {"fraction_bits": 48}}]})",
                   .factory = create)
