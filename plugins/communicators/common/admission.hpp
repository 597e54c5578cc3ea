// Whom rank 0 of a star (tcp, grpc) lets in: a rank not yet taken, of the same world size, and with
// TLS one whose certificate allows it. A certificate whose common name names a rank ("dtnn rank 2",
// scripts/make-test-ca.sh --ranks) admits that rank only; with bind_ranks every joining rank must
// present one (a shared certificate is refused).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "deadline.hpp"
#include "host_port.hpp"

namespace dtnn_net {

// The rank a certificate's common name binds ("dtnn rank 2" -> 2), or -1 when it names none.
int rank_of_common_name(const std::string& common_name);

// Why rank 0 refuses a hello asking for `rank` in a world of `world` ranks, or "" to let it in.
// holder: the peer that holds that rank already ("" when none); common_name: of the joining
// rank's certificate, null without TLS.
std::string admission_refusal(std::uint32_t rank, std::uint32_t world, int world_size,
                              const std::string& holder, const std::string* common_name,
                              bool bind_ranks);

// Rank 0's error when not every rank joined before the deadline ("tcp: rank 0 waited 60 s at
// 10.0.0.1:29500 for ranks 2, 3 (parallel.communicator.connect_timeout_s)"); joined(r) says
// whether rank r (1 .. world_size - 1) did.
[[noreturn]] void throw_missing_ranks(const std::string& transport, int world_size,
                                      const std::function<bool(int)>& joined, Deadline deadline,
                                      const HostPort& server);

}  // namespace dtnn_net
