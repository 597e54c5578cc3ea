// PyDTNN's model-synchronisation options for data-parallel training, and the weight each rank's
// contribution gets in a synchronisation (see docs/config.md, "parallel").
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/gradient_exchange.hpp"

namespace dtnn {

enum class SyncAlgorithm { avg, wavg, invwavg };
enum class SyncParticipation { all, avail2all };

struct ModelSyncOptions {
  // 0: average gradients every batch; N > 0: train locally, average weights every N batches;
  // < 0: never (ranks train independently; final_sync still applies).
  std::int64_t frequency = 0;
  SyncAlgorithm algorithm = SyncAlgorithm::wavg;
  SyncParticipation participation = SyncParticipation::all;
  std::int64_t min_available = 0;  // skip a synchronisation with fewer ranks holding samples
  bool initial_sync = true;        // start from rank 0's weights
  bool final_sync = true;          // weights averaged (when not averaging gradients) and made
                                   // bit-identical (rank 0's) after training
  // avail2all over a communicator that lets ranks leave (Communicator::let_ranks_leave): a rank
  // that left is found in every step's status sum, and counts no more.
  bool ranks_may_leave = false;
  ExchangeOptions exchange;
};

DTNN_CORE_EXPORT SyncAlgorithm parse_sync_algorithm(const std::string& name);
DTNN_CORE_EXPORT SyncParticipation parse_sync_participation(const std::string& name);

// The weight of rank `rank`'s contribution when the ranks hold counts[r] samples:
//   avg: 1 / P;  wavg: n_r / sum n;  invwavg: (min + max - n_r), normalised to sum to 1;
// over all ranks (participation all) or over the ranks with samples (avail2all: a rank without
// samples weighs 0). Weights over the participating ranks sum to 1.
DTNN_CORE_EXPORT double rank_weight(SyncAlgorithm algorithm, SyncParticipation participation,
                                    std::span<const std::int64_t> counts, int rank);

// Samples per rank, what synchronisations weigh ranks by: this step's, those since the last
// model averaging, and the run's. Every rank computes all of them alike, without communication.
struct DTNN_CORE_EXPORT RankCounts {
  std::vector<std::int64_t> step, since_sync, trained;
  std::vector<char> left;  // ranks that have left the run: their counts stay 0
  explicit RankCounts(int ranks);
  void leave(std::size_t rank);
  // The step's counts (step[r] set) added to since_sync and trained.
  void add_step();
  // How many ranks hold samples in counts.
  static std::int64_t available(std::span<const std::int64_t> counts);
};

}  // namespace dtnn
