// Secure aggregation's pairwise masks (Bonawitz et al., CCS 2017, its pairwise masking): every pair
// of ranks agrees a key (X25519 and HKDF-SHA256: pair_keys.hpp), and ChaCha20 keyed by it, its
// nonce the exchange's round, gives the pair's mask stream. Rank i adds the stream of each pair (i,
// j) with j > i and subtracts that of each pair with j < i, word by word modulo 2^64, so the masks
// of all ranks sum to zero and only the sum of the payloads is left.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "pair_keys.hpp"

namespace dtnn {
class Communicator;
}

namespace dtnn_secagg {

using Key = dtnn_codecs::Key;

class PairwiseMasks {
 public:
  // Agrees a key with every other rank (dtnn_codecs::agree_pair_keys); every rank of comm calls it
  // at the same point.
  explicit PairwiseMasks(dtnn::Communicator& comm);
  PairwiseMasks(int rank,
                std::vector<Key> pair_keys);  // keys given (tests): pair_keys[rank] unused

  // words (64-bit, host order, bytes a multiple of 8) += this rank's mask for `round`, modulo 2^64.
  void add_to(std::span<unsigned char> words, std::uint64_t round) const;
  // words += the part of that mask from this rank's pairs with `others` only (what their masks
  // cancel): secure aggregation without the ranks that left (SecAgg::unmask).
  void add_pairs_to(std::span<unsigned char> words, std::uint64_t round,
                    std::span<const int> others) const;
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(pair_keys_.size()); }

 private:
  int rank_ = 0;
  std::vector<Key> pair_keys_;  // the key shared with each rank (this rank's own: unused)
  mutable std::vector<std::uint64_t> stream_;  // one pair's mask, kept between rounds
};

// The ChaCha20 keystream of `key` with nonce `round`, as 64-bit words (host order): the mask of
// one pair. Exposed for tests.
void mask_stream(const Key& key, std::uint64_t round, std::span<std::uint64_t> out);

}  // namespace dtnn_secagg
