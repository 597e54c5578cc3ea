// ckks: homomorphic encryption of what ranks exchange, as PyDTNN 3.x's --encryption tenseal does:
// each rank encrypts its values under a CKKS key the ranks share (tenseal_context.hpp), the
// ciphertexts travel and are added without being decrypted, and each rank decrypts the sum. What
// crosses the wire, and what rank 0's link or a broker relays, is ciphertext to whoever lacks the
// key. The key comes from a file every rank holds (key_file: scripts/make-ckks-key.py makes one),
// or rank 0 makes one for the run and sends it to each rank sealed under their pair's X25519 key
// (pair_keys.hpp, sealed_box.hpp); then the ranks check they hold the same key. The threat model
// is in docs/federated.md.
//
// Payload: a word of flags (bit r: rank r had values it could not carry), then one block per
// slots() values: the ciphertext's length (a 64-bit word) and the ciphertext, zero-padded to
// Geometry::ciphertext_bound().
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "pair_keys.hpp"
#include "rank_bits.hpp"
#include "sealed_box.hpp"
#include "tenseal_context.hpp"

namespace {

using namespace dtnn;
using dtnn_ckks::Geometry;
using dtnn_ckks::TensealContext;

static_assert(std::endian::native == std::endian::little, "payload words are little-endian");

// The most modulus bits a ring of degree N may have for a security level (the Homomorphic
// Encryption Standard's table, which SEAL enforces at 128 bits).
int largest_modulus(int degree, int security) {
  struct Row {
    int degree, bits128, bits192, bits256;
  };
  static const Row rows[] = {{1024, 27, 19, 14},    {2048, 54, 37, 29},     {4096, 109, 75, 58},
                             {8192, 218, 152, 118}, {16384, 438, 305, 237}, {32768, 881, 611, 476}};
  for (const Row& r : rows)
    if (r.degree == degree)
      return security == 128 ? r.bits128 : security == 192 ? r.bits192 : r.bits256;
  return 0;
}

std::uint64_t word_at(std::span<const unsigned char> p, std::size_t at) {
  std::uint64_t w;
  std::memcpy(&w, p.data() + at, 8);
  return w;
}

void put_word(std::span<unsigned char> p, std::size_t at, std::uint64_t w) {
  std::memcpy(p.data() + at, &w, 8);
}

class Ckks final : public Codec {
 public:
  explicit Ckks(const Params& p)
      : where_(p.where()),
        log_slots_(static_cast<int>(p.get_int("slots"))),
        scale_bits_(static_cast<int>(p.get_int("scale"))),
        security_(static_cast<int>(p.get_int("security"))),
        key_file_(p.get_string("key_file")) {
    if (security_ != 128 && security_ != 192 && security_ != 256)
      p.fail("security", "128, 192 or 256 (bits)");
    if (!key_file_.empty()) {
      std::string bytes;
      try {
        bytes = read_file(key_file_, std::size_t{1} << 30);
      } catch (const std::exception& e) {
        p.fail("key_file", std::string("a TenSEAL CKKS key; ") + e.what());
      }
      const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
      context_.emplace(TensealContext::load({data, bytes.size()}, key_file_));
      geometry_ = context_->geometry();
    } else {
      if (log_slots_ < 10 || log_slots_ > 14)
        p.fail("slots", "an integer from 10 to 14 (2^slots values per ciphertext)");
      if (scale_bits_ < 25 || scale_bits_ > 40)
        p.fail("scale", "an integer from 25 to 40 (values go as value x 2^scale)");
      geometry_.degree = 2 << log_slots_;
      geometry_.data_primes = 1;
      geometry_.data_bits = scale_bits_ + 20;
      geometry_.modulus_bits = 2 * geometry_.data_bits;
      geometry_.scale_bits = scale_bits_;
    }
    const int limit = largest_modulus(geometry_.degree, security_);
    if (geometry_.modulus_bits > limit)
      p.fail(key_file_.empty() ? "scale" : "key_file",
             "at most " + std::to_string(limit) + " modulus bits for " + std::to_string(security_) +
                 "-bit security at degree " + std::to_string(geometry_.degree) + " (this key has " +
                 std::to_string(geometry_.modulus_bits) +
                 "): a smaller scale, more slots, or less security");
    if (geometry_.data_bits < geometry_.scale_bits + 10)
      p.fail("key_file", "a key whose fresh ciphertexts have at least 10 bits above its scale");
  }

  std::size_t payload_bytes(std::size_t n) const override { return 8 + blocks(n) * block_bytes(); }

  void encode(std::span<const float> x, std::span<unsigned char> payload) const override {
    const TensealContext& context = joined();
    const double limit = largest();
    std::vector<float> chunk;
    bool refused = false;
    std::fill(payload.begin(), payload.end(), 0);
    for (std::size_t b = 0; b < blocks(x.size()); ++b) {
      const std::size_t first = b * geometry_.slots();
      const auto values = x.subspan(first, std::min(geometry_.slots(), x.size() - first));
      chunk.assign(values.begin(), values.end());
      for (float& v : chunk)
        if (!std::isfinite(v) || std::abs(static_cast<double>(v)) > limit) {
          refused = true;
          v = 0.0f;
        }
      const std::vector<unsigned char> c = context.encrypt(chunk);
      put_block(payload, b, c);
    }
    put_word(payload, 0, refused ? dtnn_codecs::rank_bit(rank_) : 0);
  }

  void decode_add(std::span<const unsigned char> payload, std::span<float> out,
                  float scale) const override {
    const TensealContext& context = joined();
    if (const std::uint64_t who = word_at(payload, 0); who != 0) {
      if (!warned_) say_refused(who);
      for (float& o : out) o += std::nanf("");
      return;
    }
    for (std::size_t b = 0; b < blocks(out.size()); ++b) {
      const std::size_t first = b * geometry_.slots();
      context.decrypt_add(block(payload, b),
                          out.subspan(first, std::min(geometry_.slots(), out.size() - first)),
                          scale);
    }
  }

  void combine(std::span<unsigned char> sum,
               std::span<const unsigned char> payload) const override {
    const TensealContext& context = joined();
    DTNN_CHECK(sum.size() == payload.size(), "ckks: payloads of different sizes");
    put_word(sum, 0, word_at(sum, 0) | word_at(payload, 0));
    const std::size_t count = (sum.size() - 8) / block_bytes();
    for (std::size_t b = 0; b < count; ++b) {
      const std::vector<unsigned char> c = context.add(block(sum, b), block(payload, b));
      put_block(sum, b, c);
    }
  }

  // CKKS adds noise of absolute size: measured (docs/federated.md), a decrypted value, alone or in
  // a sum of three, is off by at most 1.6 N 2^-scale (degree N); taking 4 N 2^-scale, a value of
  // fp16's normal range (|x| >= 2^-14) is off by at most 4 N 2^(14 - scale) of itself.
  double contraction(std::size_t) const override {
    const double relative = 4.0 * geometry_.degree * std::ldexp(1.0, 14 - geometry_.scale_bits);
    return 1.0 - std::min(1.0, relative * relative);
  }

  Combination combination() const override { return Combination::combine; }
  bool deterministic() const override { return false; }

  void join(Communicator& comm) override {
    rank_ = comm.rank();
    ranks_ = comm.size();
    if (!context_) context_.emplace(receive_key(comm));
    check_same_key(comm);
  }

 private:
  std::size_t blocks(std::size_t n) const {
    return (n + geometry_.slots() - 1) / geometry_.slots();
  }
  std::size_t block_bytes() const { return 8 + (geometry_.ciphertext_bound() + 7) / 8 * 8; }

  std::span<const unsigned char> block(std::span<const unsigned char> payload,
                                       std::size_t b) const {
    const std::size_t at = 8 + b * block_bytes();
    const std::uint64_t length = word_at(payload, at);
    if (length == 0 || length > block_bytes() - 8)
      throw Error("ckks: a payload's ciphertext " + std::to_string(b) + " says it has " +
                  std::to_string(length) + " bytes (at most " + std::to_string(block_bytes() - 8) +
                  "): not a payload of this codec");
    return payload.subspan(at + 8, length);
  }

  void put_block(std::span<unsigned char> payload, std::size_t b,
                 const std::vector<unsigned char>& c) const {
    const std::size_t at = 8 + b * block_bytes();
    if (c.size() > block_bytes() - 8)
      throw Error("ckks: a ciphertext of " + std::to_string(c.size()) + " bytes exceeds its " +
                  std::to_string(block_bytes() - 8) + "-byte block");
    put_word(payload, at, c.size());
    std::copy(c.begin(), c.end(), payload.begin() + static_cast<std::ptrdiff_t>(at + 8));
    std::fill(payload.begin() + static_cast<std::ptrdiff_t>(at + 8 + c.size()),
              payload.begin() + static_cast<std::ptrdiff_t>(at + block_bytes()), 0);
  }

  const TensealContext& joined() const {
    if (!context_) throw Error(where_ + ": the ckks codec has no key before it joins the ranks");
    return *context_;
  }

  // The largest magnitude a rank may send: the sum of every rank's, times 2^scale, stays 8 bits
  // below the fresh ciphertexts' modulus.
  double largest() const {
    return std::ldexp(1.0, geometry_.data_bits - geometry_.scale_bits - 8) / ranks_;
  }

  // Rank 0 makes the run's key and sends it to each other rank sealed under their pair key.
  TensealContext receive_key(Communicator& comm) {
    if (ranks_ == 1) return TensealContext::make(log_slots_, scale_bits_);
    const auto keys =
        dtnn_codecs::agree_pair_keys(comm, "ckks", "dtnn ckks, secret key transport, v1");
    std::optional<TensealContext> made;
    std::vector<unsigned char> boxes;
    std::uint64_t box_bytes = 0;
    if (rank_ == 0) {
      made.emplace(TensealContext::make(log_slots_, scale_bits_));
      const std::vector<unsigned char> secret = made->serialize_with_secret_key();
      for (int r = 1; r < ranks_; ++r) {
        const auto box = dtnn_codecs::seal(keys[static_cast<std::size_t>(r)], secret);
        box_bytes = box.size();
        boxes.insert(boxes.end(), box.begin(), box.end());
      }
    }
    comm.broadcast(&box_bytes, 2, DType::float32, 0, "ckks: the key's size");
    const std::size_t total = box_bytes * static_cast<std::size_t>(ranks_ - 1);
    if (box_bytes == 0 || box_bytes > (std::size_t{1} << 30))
      throw Error("ckks: rank 0 sent a key of " + std::to_string(box_bytes) + " bytes");
    boxes.resize((total + 3) / 4 * 4);
    comm.broadcast(boxes.data(), boxes.size() / 4, DType::float32, 0, "ckks: the key, sealed");
    if (rank_ == 0) return std::move(*made);
    const auto mine = std::span<const unsigned char>(boxes).subspan(
        static_cast<std::size_t>(rank_ - 1) * box_bytes, box_bytes);
    const auto secret = dtnn_codecs::open(keys[0], mine, "ckks: the key rank 0 sent");
    return TensealContext::load(secret, "ckks: the key rank 0 sent");
  }

  // Every rank's key fingerprint allgathered: a rank with another key (another key_file) is named.
  void check_same_key(Communicator& comm) const {
    const std::vector<unsigned char> mine = context_->fingerprint();
    DTNN_CHECK(mine.size() == 32, "ckks: a fingerprint is 32 bytes");
    std::vector<unsigned char> all(32 * static_cast<std::size_t>(ranks_));
    comm.allgather(mine.data(), all.data(), 8, DType::float32, "ckks: key fingerprints");
    std::string differ;
    for (int r = 1; r < ranks_; ++r)
      if (!std::equal(all.begin(), all.begin() + 32, all.begin() + 32 * r))
        differ += (differ.empty() ? "" : ", ") + std::to_string(r);
    if (!differ.empty())
      throw Error(
          "ckks: rank(s) " + differ + " hold another key than rank 0" +
          (key_file_.empty()
               ? std::string()
               : " (each rank's key_file must be the same key; this rank's: " + key_file_ + ")"));
  }

  void say_refused(std::uint64_t who) const {
    warned_ = true;
    const std::string ranks = dtnn_codecs::ranks_named(who);
    log_warning("ckks: rank(s) " + ranks + " had values that are not finite or beyond +-" +
                std::to_string(largest()) + " (scale 2^" + std::to_string(geometry_.scale_bits) +
                ", " + std::to_string(ranks_) + " ranks): the sum they join is NaN (said once)");
  }

  std::string where_;
  int log_slots_, scale_bits_, security_;
  std::string key_file_;
  Geometry geometry_;
  std::optional<TensealContext> context_;
  int rank_ = 0, ranks_ = 1;
  mutable bool warned_ = false;
};

Plugin* create(const Params& p, const PluginContext&) { return new Ckks(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "codec", .name = "ckks",
                   .description =
                       "homomorphic encryption (CKKS, through Python's TenSEAL): ciphertexts "
                       "added without being decrypted",
                   .parameters = R"({"slots": 13, "scale": 40, "security": 128, "key_file": ""})",
                   .traits = R"({"aliases": ["tenseal"],
                                 "conformance": [{"params": {"slots": 12, "scale": 40},
                                                  "n": [1, 7, 1000, 2049]}]})",
                   .factory = create)
