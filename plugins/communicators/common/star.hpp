// The collectives over a star of links (tcp's connections, grpc's streams): rank 0 holds a link to
// every other rank and does the arithmetic, the others talk to rank 0 alone. Rank 0 sums the ranks'
// contributions in rank order and sends every rank the same bytes, so all ranks hold bit-identical
// results. Each message carries the collective's number, and its length must be the collective's:
// a rank that runs other steps or another model is named, not summed. When ranks may leave (a
// federated run), rank 0 goes on without a rank whose link closes or that stays silent for half the
// collective's timeout (the other half left for answering the rest): it adds nothing to later sums
// and zeros to later allgathers.
//
// A Link moves one collective's message: send(data, bytes, seq, deadline) and receive(into, bytes,
// seq, deadline), which throws dtnn_net::PeerGone when the peer closed the link or did not answer
// in time and dtnn::Error naming the peer when its message is not the one due; secure() says
// whether it is encrypted and authenticated.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "deadline.hpp"
#include "departures.hpp"
#include "dtnn/error.hpp"
#include "dtnn/tensor.hpp"
#include "sum_into.hpp"

namespace dtnn_net {

template <class Link>
class Star {
 public:
  // Rank 0: links[r] to rank r (links[0] empty); another rank: links = {its link to rank 0}.
  // transport: "tcp", for errors.
  Star(int rank, int size, std::vector<std::unique_ptr<Link>> links, std::string transport)
      : rank_(rank),
        size_(size),
        transport_(std::move(transport)),
        links_(std::move(links)),
        departures_(size) {}

  void allreduce_sum(void* data, std::size_t count, dtnn::DType dtype, std::uint64_t seq,
                     Deadline deadline) {
    const std::size_t bytes = count * dtype_size(dtype);
    if (rank_ != 0) {
      link(0).send(data, bytes, seq, deadline);
      link(0).receive(data, bytes, seq, deadline);
      return;
    }
    incoming_.resize(bytes);
    const Deadline listen = departures_.listening(deadline);
    for (int r = 1; r < size_; ++r)
      if (reach(r, seq, [&] { link(r).receive(incoming_.data(), bytes, seq, listen); }))
        sum_into(data, incoming_.data(), count, dtype);
    for (int r = 1; r < size_; ++r)
      reach(r, seq, [&] { link(r).send(data, bytes, seq, deadline); });
  }

  void broadcast(void* data, std::size_t count, dtnn::DType dtype, int root, std::uint64_t seq,
                 Deadline deadline) {
    const std::size_t bytes = count * dtype_size(dtype);
    if (rank_ != 0) {
      if (rank_ == root)
        link(0).send(data, bytes, seq, deadline);
      else
        link(0).receive(data, bytes, seq, deadline);
      return;
    }
    if (root != 0 && !reach(root, seq, [&] { link(root).receive(data, bytes, seq, deadline); }))
      throw dtnn::Error(transport_ + ": rank " + std::to_string(root) +
                        ", the root of broadcast #" + std::to_string(seq) + ", has left");
    for (int r = 1; r < size_; ++r)
      if (r != root) reach(r, seq, [&] { link(r).send(data, bytes, seq, deadline); });
  }

  void allgather(const void* send, void* recv, std::size_t count, dtnn::DType dtype,
                 std::uint64_t seq, Deadline deadline) {
    const std::size_t bytes = count * dtype_size(dtype);
    const std::size_t all = bytes * static_cast<std::size_t>(size_);
    auto* out = static_cast<unsigned char*>(recv);
    if (rank_ != 0) {
      link(0).send(send, bytes, seq, deadline);
      link(0).receive(out, all, seq, deadline);
      return;
    }
    if (bytes > 0 && out != send) std::memmove(out, send, bytes);
    const Deadline listen = departures_.listening(deadline);
    for (int r = 1; r < size_; ++r) {
      unsigned char* slot = out + static_cast<std::size_t>(r) * bytes;
      if (!reach(r, seq, [&] { link(r).receive(slot, bytes, seq, listen); }) && bytes > 0)
        std::memset(slot, 0, bytes);  // a rank that left: zeros, also where it left mid-way
    }
    for (int r = 1; r < size_; ++r) reach(r, seq, [&] { link(r).send(out, all, seq, deadline); });
  }

  void let_ranks_leave() { departures_.allow(); }

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool secure() const {
    for (const auto& l : links_)
      if (l && !l->secure()) return false;
    return true;
  }

 private:
  Link& link(int rank) { return *links_[static_cast<std::size_t>(rank)]; }

  // Rank 0: runs io on rank r's link; false when r has left (its link then closed).
  template <class Io>
  bool reach(int r, std::uint64_t seq, Io io) {
    if (departures_.reach(r, seq, io)) return true;
    links_[static_cast<std::size_t>(r)].reset();
    return false;
  }

  int rank_, size_;
  std::string transport_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<unsigned char> incoming_;  // rank 0: one rank's contribution
  Departures departures_;                // rank 0
};

}  // namespace dtnn_net
