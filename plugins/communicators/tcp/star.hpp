// The collectives over a star of connections: rank 0 holds one to every other rank and does the
// arithmetic, the others talk to rank 0 alone. Rank 0 sums the ranks' contributions in rank order
// and sends every rank the same bytes, so all ranks hold bit-identical results. Each data frame
// carries the collective's number, and its length must be the collective's: a rank that runs other
// steps or another model is named, not summed. When ranks may leave (a federated run), rank 0 goes
// on without a rank whose connection closes or that stays silent for half the collective's timeout
// (the other half left for answering the rest): it adds nothing to later sums and zeros to later
// allgathers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "deadline.hpp"
#include "departures.hpp"
#include "dtnn/tensor.hpp"
#include "stream.hpp"

namespace dtnn_tcp {

class Star {
 public:
  // Rank 0: links[r] to rank r (links[0] empty); another rank: links = {its link to rank 0}.
  Star(int rank, int size, std::vector<std::unique_ptr<Stream>> links);

  void allreduce_sum(void* data, std::size_t count, dtnn::DType dtype, std::uint64_t seq,
                     Deadline deadline);
  void broadcast(void* data, std::size_t count, dtnn::DType dtype, int root, std::uint64_t seq,
                 Deadline deadline);
  void allgather(const void* send, void* recv, std::size_t count, dtnn::DType dtype,
                 std::uint64_t seq, Deadline deadline);

  void let_ranks_leave() { departures_.allow(); }

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool secure() const;

 private:
  Stream& link(int rank) { return *links_[static_cast<std::size_t>(rank)]; }
  void send(Stream& to, const void* data, std::size_t bytes, std::uint64_t seq, Deadline deadline);
  void receive(Stream& from, void* into, std::size_t bytes, std::uint64_t seq, Deadline deadline);
  // Rank 0: runs io on rank r's link; false when r has left (its link then closed).
  template <class Io>
  bool reach(int r, std::uint64_t seq, Io io);

  int rank_, size_;
  std::vector<std::unique_ptr<Stream>> links_;
  std::vector<unsigned char> incoming_;  // rank 0: one rank's contribution
  dtnn_net::Departures departures_;      // rank 0
};

}  // namespace dtnn_tcp
