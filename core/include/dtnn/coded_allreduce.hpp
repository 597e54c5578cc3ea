// A sum over ranks through a codec (dtnn/codec.hpp): each rank encodes its values, the ranks
// allgather the payloads, and every rank decodes every rank's payload into the sum, in rank order,
// so all hold the same bits. With error feedback (for gradients) each region keeps a residual,
// what its payloads have not carried yet: the values encoded are the step's plus the residual, and
// the residual becomes what that payload dropped, so over the steps the sum of what a rank sent
// equals the sum of its gradients less the last residual. A codec whose payloads add as words
// (Codec::Combination::add_words) has its mask added after the residual is taken, the words of
// every rank's payload summed modulo 2^64, and the sum decoded once; one that combines its payloads
// itself (Codec::Combination::combine: ciphertexts) folds them in rank order and decodes once. A
// codec that sums over the ranks itself (Codec::Combination::reduce: PowerSGD) is handed the values
// plus the residual and the region's codec state; each rank's residual then becomes its values
// less its share (1 / ranks) of the sum the codec carried.
// When ranks may leave (a federated run, a codec that survives_departures), each payload travels
// with a mark: a block without it is a rank that left, left out of the sum. An add_words sum that
// lacks payloads is then corrected by one more allgather, of the present ranks' corrections (what
// of their masks only the missing payloads would have cancelled: Codec::unmask); a rank that
// leaves during that one takes its correction along, and the sum, lost, becomes NaN, which the
// run's non-finite policy meets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Codec;
class Communicator;
struct BucketMatrix;

class DTNN_CORE_EXPORT CodedAllreduce {
 public:
  CodedAllreduce(const Codec& codec, Communicator& comm);

  // data = sum over ranks of data, as the codec carries it. `region` names the residual used with
  // error feedback (a bucket's index); without it the values go as they are. matrices: where
  // data's tensors lie, for a codec that works on matrices (none: one tensor). Returns the bytes
  // of this rank's payload.
  std::size_t sum(std::span<float> data, const std::string& name, bool error_feedback,
                  std::size_t region = 0, std::span<const BucketMatrix> matrices = {});

  // Ranks may leave from now on (see above).
  void let_ranks_leave() { ranks_may_leave_ = true; }
  // The ranks whose payloads the last sum lacked (they left), in order.
  const std::vector<int>& absent() const { return absent_; }

  // The residuals, region by region (empty regions: never summed with feedback).
  const std::vector<std::vector<float>>& residuals() const { return residuals_; }
  void set_residuals(std::vector<std::vector<float>> residuals) {
    residuals_ = std::move(residuals);
  }
  // A reduce codec's state, region by region (its warm starts).
  const std::vector<std::vector<float>>& codec_states() const { return states_; }
  void set_codec_states(std::vector<std::vector<float>> states) { states_ = std::move(states); }

 private:
  // Region's residual plus data: what this step should carry (error feedback).
  std::vector<float>& carry(std::size_t region, std::span<const float> data);
  // Allgathers this rank's payload (words floats) and, when ranks may leave, its mark; notes
  // which ranks' blocks lack it. Returns the block's size in floats.
  std::size_t gather(std::size_t words, const std::string& name);
  bool present(std::size_t rank) const { return absent_rank_[rank] == 0; }

  const Codec& codec_;
  Communicator& comm_;
  std::vector<std::vector<float>> residuals_;
  std::vector<std::vector<float>> states_;  // reduce codecs
  std::vector<float> send_, recv_;          // payloads, in floats (the communicators' unit)
  std::vector<unsigned char> words_;        // add_words, combine: the payloads' sum
  std::vector<float> sent_;                 // reduce codecs: what this rank's values sent
  std::uint64_t round_ = 0;                 // add_words: sums so far, the masks' round
  bool ranks_may_leave_ = false;
  std::vector<int> absent_;                 // of the last sum
  std::vector<unsigned char> absent_rank_;  // per rank, of the last gather
};

}  // namespace dtnn
