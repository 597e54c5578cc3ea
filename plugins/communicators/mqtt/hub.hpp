// The collectives through the broker: every rank publishes its contribution for rank 0, which sums
// the ranks' contributions in rank order and publishes the result once; the broker hands it to
// every rank, so all hold bit-identical results. Transfers longer than chunk_bytes go as
// consecutive chunks. Each message must carry the run's session, the collective's number, its
// transfer's length and the next offset: a rank that runs other steps or another model, or a
// message of another run, is named, not summed. When ranks may leave (a federated run), rank 0 goes
// on without a rank whose gone message arrives or that stays silent for half the collective's
// timeout: it adds nothing to later sums and zeros to later allgathers (a rank let go for silence
// still reads the results; what it sends is not read again).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "broker_link.hpp"
#include "departures.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn_mqtt {

class Hub {
 public:
  // nonces: rank 0's knowledge of which process is each rank (a gone message from another
  // process on that rank's topic, one refused at start-up, is ignored); empty on the other ranks.
  Hub(std::unique_ptr<BrokerLink> link, int rank, int size, const Session& session,
      std::size_t chunk_bytes, std::vector<std::uint64_t> nonces);

  void allreduce_sum(void* data, std::size_t count, dtnn::DType dtype, std::uint64_t seq,
                     Deadline deadline);
  void broadcast(void* data, std::size_t count, dtnn::DType dtype, int root, std::uint64_t seq,
                 Deadline deadline);
  void allgather(const void* send, void* recv, std::size_t count, dtnn::DType dtype,
                 std::uint64_t seq, Deadline deadline);
  void let_ranks_leave() { departures_.allow(); }

 private:
  // Publishes a transfer on this rank's topic, in chunks (one, when empty).
  void send(const void* data, std::size_t bytes, std::uint64_t seq);
  // Reads sender's transfer for collective seq, `bytes` long, chunk by chunk into `into`; chunks
  // of `align` bytes' multiples.
  void receive(int sender, void* into, std::size_t bytes, std::size_t align, std::uint64_t seq,
               Deadline deadline);
  // Rank 0: receive()s rank r's transfer; false when r has left.
  bool reach(int r, void* into, std::size_t bytes, std::size_t align, std::uint64_t seq,
             Deadline deadline);

  std::unique_ptr<BrokerLink> link_;
  int rank_, size_;
  Session session_;
  std::size_t chunk_bytes_;
  std::vector<std::uint64_t> nonces_;
  std::vector<unsigned char> incoming_;  // rank 0: one rank's contribution
  dtnn_net::Departures departures_;      // rank 0
};

}  // namespace dtnn_mqtt
