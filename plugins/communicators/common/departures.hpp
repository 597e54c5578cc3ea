// Rank 0's side of a star whose ranks may leave (a federated run, Communicator::let_ranks_leave):
// which ranks have left, how long it listens for a contribution, and the warning when one leaves.
// A transport throws PeerGone where a peer closed its connection, said goodbye or did not answer
// in time, and a plain Error where it misbehaved; only the first lets a rank go.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "deadline.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"

namespace dtnn_net {

class PeerGone : public dtnn::Error {
 public:
  using dtnn::Error::Error;
};

class Departures {
 public:
  explicit Departures(int size) : left_(static_cast<std::size_t>(size)) {}

  void allow() { allowed_ = true; }
  bool allowed() const { return allowed_; }
  bool has_left(int rank) const { return left_[static_cast<std::size_t>(rank)]; }

  // How long rank 0 waits for a rank's contribution: half the collective's deadline when ranks may
  // leave, the other half left for answering the ranks still there.
  Deadline listening(Deadline deadline) const {
    if (!allowed_ || !deadline.limited()) return deadline;
    Deadline half = deadline;
    half.seconds = deadline.seconds / 2;
    half.at -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(half.seconds));
    return half;
  }

  // Runs io (a transfer with rank `rank`); false when the rank has left, before or now (io threw
  // PeerGone and ranks may leave: then the rank is let go, with a warning naming collective seq).
  template <class Io>
  bool reach(int rank, std::uint64_t seq, Io io) {
    if (has_left(rank)) return false;
    try {
      io();
      return true;
    } catch (const PeerGone& e) {
      if (!allowed_) throw;
      left_[static_cast<std::size_t>(rank)] = true;
      int staying = 0;
      for (bool l : left_) staying += !l;
      dtnn::log_warning(std::string(e.what()) + " (collective #" + std::to_string(seq) +
                        "): it has left; the run goes on with " + std::to_string(staying) + " of " +
                        std::to_string(left_.size()) +
                        " ranks (parallel.model_sync_participation)");
      return false;
    }
  }

 private:
  bool allowed_ = false;
  std::vector<bool> left_;
};

}  // namespace dtnn_net
