// The collectives through the broker: every rank publishes its contribution for rank 0, which sums
// the ranks' contributions in rank order and publishes the result once; the broker hands it to
// every rank, so all hold bit-identical results. Transfers longer than chunk_bytes go as
// consecutive chunks. Each message must carry the run's session, the collective's number, its
// transfer's length and the next offset: a rank that runs other steps or another model, or a
// message of another run, is named, not summed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "broker_link.hpp"
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

 private:
  // Publishes a transfer on this rank's topic, in chunks (one, when empty).
  void send(const void* data, std::size_t bytes, std::uint64_t seq);
  // Reads sender's transfer for collective seq, `bytes` long, chunk by chunk into `into`; chunks
  // of `align` bytes' multiples.
  void receive(int sender, void* into, std::size_t bytes, std::size_t align, std::uint64_t seq,
               Deadline deadline);

  std::unique_ptr<BrokerLink> link_;
  int rank_, size_;
  Session session_;
  std::size_t chunk_bytes_;
  std::vector<std::uint64_t> nonces_;
  std::vector<unsigned char> incoming_;  // rank 0: one rank's contribution
};

}  // namespace dtnn_mqtt
