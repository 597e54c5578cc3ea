// How the ranks meet. Rank 0 listens at the server address and lets each other rank in once: after
// the TLS handshake (when the run has TLS) and a hello that names a rank not yet taken and the same
// world size. With TLS, a certificate whose common name names a rank ("dtnn rank 2",
// scripts/make-test-ca.sh --ranks) admits that rank only; with bind_ranks, every joining rank must
// present one (a shared certificate is refused). A connection that fails either gets a refusal
// (when it can still be told), a warning names its address and why, and rank 0 goes on waiting for
// the real ranks; the listening socket closes once every rank has joined.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "deadline.hpp"
#include "endpoint.hpp"
#include "stream.hpp"

namespace dtnn_tcp {

class TlsContext;

// Rank 0: the connection to each other rank, indexed by rank (entry 0 is empty).
std::vector<std::unique_ptr<Stream>> gather_ranks(const HostPort& server, int world_size,
                                                  const TlsContext* tls, Deadline deadline,
                                                  bool bind_ranks = false);

// Any other rank: its connection to rank 0, welcomed.
std::unique_ptr<Stream> join_rank0(const HostPort& server, int rank, int world_size,
                                   const TlsContext* tls, Deadline deadline);

}  // namespace dtnn_tcp
