#include "admission.hpp"

#include <string_view>

#include "dtnn/error.hpp"

namespace dtnn_net {

int rank_of_common_name(const std::string& common_name) {
  constexpr std::string_view prefix = "dtnn rank ";
  if (!common_name.starts_with(prefix) || common_name.size() == prefix.size() ||
      common_name.size() > prefix.size() + 9)
    return -1;
  int rank = 0;
  for (const char c : std::string_view(common_name).substr(prefix.size())) {
    if (c < '0' || c > '9') return -1;
    rank = rank * 10 + (c - '0');
  }
  return rank;
}

std::string admission_refusal(std::uint32_t rank, std::uint32_t world, int world_size,
                              const std::string& holder, const std::string* common_name,
                              bool bind_ranks) {
  if (world != static_cast<std::uint32_t>(world_size))
    return "it expects " + std::to_string(world) + " ranks, rank 0 " + std::to_string(world_size) +
           " (--world-size differs)";
  if (rank < 1 || rank >= static_cast<std::uint32_t>(world_size))
    return "rank " + std::to_string(rank) + " is not among 1.." + std::to_string(world_size - 1);
  if (!holder.empty())
    return "rank " + std::to_string(rank) + " has joined already, from " + holder;
  if (!common_name) return "";
  const int bound = rank_of_common_name(*common_name);
  if (bound >= 0 && bound != static_cast<int>(rank))
    return "its certificate (\"" + *common_name + "\") is rank " + std::to_string(bound) +
           "'s, and it asked to join as rank " + std::to_string(rank);
  if (bound < 0 && bind_ranks)
    return "its certificate (\"" + *common_name + "\") names no rank, and the run binds ranks " +
           "to certificates (tls_bind_ranks; scripts/make-test-ca.sh --ranks)";
  return "";
}

void throw_missing_ranks(const std::string& transport, int world_size,
                         const std::function<bool(int)>& joined, Deadline deadline,
                         const HostPort& server) {
  std::string missing;
  for (int r = 1; r < world_size; ++r)
    if (!joined(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  throw dtnn::Error(transport + ": rank 0 waited " + deadline.seconds_text() + " s at " +
                    server.text() + " for ranks " + missing +
                    " (parallel.communicator.connect_timeout_s)");
}

}  // namespace dtnn_net
