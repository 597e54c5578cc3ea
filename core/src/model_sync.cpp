#include "dtnn/model_sync.hpp"

#include <algorithm>
#include <string>

#include "dtnn/error.hpp"

namespace dtnn {

SyncAlgorithm parse_sync_algorithm(const std::string& name) {
  if (name == "avg") return SyncAlgorithm::avg;
  if (name == "wavg") return SyncAlgorithm::wavg;
  if (name == "invwavg" || name == "invavg") return SyncAlgorithm::invwavg;  // 3.x's: invavg
  throw Error("model_sync_alg: expected \"avg\", \"wavg\" or \"invwavg\", got \"" + name + "\"");
}

SyncParticipation parse_sync_participation(const std::string& name) {
  if (name == "all") return SyncParticipation::all;
  if (name == "avail2all") return SyncParticipation::avail2all;
  throw Error("model_sync_participation: expected \"all\" or \"avail2all\", got \"" + name + "\"");
}

double rank_weight(SyncAlgorithm algorithm, SyncParticipation participation,
                   std::span<const std::int64_t> counts, int rank) {
  const auto me = static_cast<std::size_t>(rank);
  DTNN_CHECK(me < counts.size(), "rank outside the counts");
  auto takes_part = [&](std::size_t r) {
    return participation == SyncParticipation::all || counts[r] > 0;
  };
  if (!takes_part(me)) return 0.0;
  double ranks = 0, sum = 0;
  std::int64_t lo = 0, hi = 0;
  bool first = true;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (!takes_part(r)) continue;
    ranks += 1;
    sum += static_cast<double>(counts[r]);
    lo = first ? counts[r] : std::min(lo, counts[r]);
    hi = first ? counts[r] : std::max(hi, counts[r]);
    first = false;
  }
  switch (algorithm) {
    case SyncAlgorithm::avg:
      return 1.0 / ranks;
    case SyncAlgorithm::wavg:
      return sum > 0 ? static_cast<double>(counts[me]) / sum : 1.0 / ranks;
    case SyncAlgorithm::invwavg: {
      // sum over ranks of (lo + hi - n_r) = ranks * (lo + hi) - sum
      const double total = ranks * static_cast<double>(lo + hi) - sum;
      return total > 0 ? static_cast<double>(lo + hi - counts[me]) / total : 1.0 / ranks;
    }
  }
  return 0.0;
}

RankCounts::RankCounts(int ranks)
    : step(static_cast<std::size_t>(ranks)),
      since_sync(static_cast<std::size_t>(ranks), 0),
      trained(static_cast<std::size_t>(ranks), 0),
      left(static_cast<std::size_t>(ranks), 0) {}

void RankCounts::leave(std::size_t rank) {
  left[rank] = 1;
  step[rank] = since_sync[rank] = trained[rank] = 0;
}

void RankCounts::add_step() {
  for (std::size_t r = 0; r < step.size(); ++r) {
    since_sync[r] += step[r];
    trained[r] += step[r];
  }
}

std::int64_t RankCounts::available(std::span<const std::int64_t> counts) {
  return static_cast<std::int64_t>(
      std::count_if(counts.begin(), counts.end(), [](std::int64_t v) { return v > 0; }));
}

}  // namespace dtnn
