#include "dtnn/epoch_order.hpp"

#include <algorithm>
#include <numeric>

#include "dtnn/error.hpp"
#include "dtnn/rng.hpp"

namespace dtnn {

EpochOrder::EpochOrder(std::int64_t train_samples, std::int64_t epoch_samples,
                       std::int64_t global_batch, int ranks)
    : shuffled_(static_cast<std::size_t>(train_samples)),
      order_(static_cast<std::size_t>(epoch_samples)),
      global_batch_(global_batch),
      ranks_(ranks) {}

EpochOrder::EpochOrder(std::int64_t train_samples, std::vector<std::int64_t> epoch_samples,
                       std::int64_t batch, int rank)
    : shuffled_(static_cast<std::size_t>(train_samples)),
      order_(static_cast<std::size_t>(epoch_samples.at(static_cast<std::size_t>(rank)))),
      global_batch_(batch),
      ranks_(static_cast<int>(epoch_samples.size())),
      per_rank_(std::move(epoch_samples)),
      rank_(rank) {}

void EpochOrder::begin_epoch(std::uint64_t seed, std::int64_t epoch, bool shuffle) {
  std::iota(shuffled_.begin(), shuffled_.end(), 0);
  if (shuffle)
    Rng(Rng::derive(seed, 1000 + static_cast<std::uint64_t>(epoch))).shuffle(std::span(shuffled_));
  for (std::size_t k = 0; k < order_.size(); ++k) order_[k] = shuffled_[k % shuffled_.size()];
}

std::int64_t EpochOrder::steps() const {
  auto steps_of = [&](std::int64_t samples) {
    return (samples + global_batch_ - 1) / global_batch_;
  };
  if (per_rank_.empty()) return steps_of(static_cast<std::int64_t>(order_.size()));
  std::int64_t most = 0;
  for (const std::int64_t n : per_rank_) most = std::max(most, steps_of(n));
  return most;
}

std::int64_t EpochOrder::samples(std::int64_t steps) const {
  if (per_rank_.empty())
    return std::min(static_cast<std::int64_t>(order_.size()), steps * global_batch_);
  std::int64_t total = 0;
  for (const std::int64_t n : per_rank_) total += std::min(n, steps * global_batch_);
  return total;
}

std::pair<std::int64_t, std::int64_t> EpochOrder::part(std::int64_t step, int rank) const {
  const std::int64_t b0 = step * global_batch_;
  if (!per_rank_.empty()) {
    const std::int64_t n = per_rank_[static_cast<std::size_t>(rank)];
    return {b0, std::clamp<std::int64_t>(n - b0, 0, global_batch_)};
  }
  const std::int64_t n = std::min(global_batch_, static_cast<std::int64_t>(order_.size()) - b0);
  return {b0 + n * rank / ranks_, n * (rank + 1) / ranks_ - n * rank / ranks_};
}

std::span<const std::int64_t> EpochOrder::indices(std::int64_t step, int rank) const {
  DTNN_CHECK(per_rank_.empty() || rank == rank_, "per-rank datasets: only this rank's samples");
  const auto [first, count] = part(step, rank);
  return std::span<const std::int64_t>(order_).subspan(static_cast<std::size_t>(first),
                                                       static_cast<std::size_t>(count));
}

}  // namespace dtnn
