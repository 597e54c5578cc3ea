#include "arrivals.hpp"

#include <algorithm>
#include <cstring>

namespace dtnn_mpi {

namespace {
constexpr int kTag = 7;
}

ArrivalBoard::ArrivalBoard(MPI_Comm comm, int rank, int size)
    : comm_(comm), rank_(rank), peers_(static_cast<std::size_t>(size)) {
  for (int r = 0; r < size; ++r)
    if (r != rank_) {
      Peer& p = peers_[static_cast<std::size_t>(r)];
      p.heard = std::chrono::steady_clock::now();
      MPI_Irecv(&p.in, sizeof(Announcement), MPI_BYTE, r, kTag, comm_, &p.recv);
    }
}

ArrivalBoard::~ArrivalBoard() {
  for (Peer& p : peers_) {
    if (p.recv != MPI_REQUEST_NULL) {
      MPI_Cancel(&p.recv);
      MPI_Wait(&p.recv, MPI_STATUS_IGNORE);
    }
    // An announcement still in flight goes to a rank that has stopped listening: let MPI finish
    // it in its own time.
    if (p.send != MPI_REQUEST_NULL) MPI_Request_free(&p.send);
  }
}

void ArrivalBoard::send(int rank, Peer& p) {
  p.out = p.latest;
  p.unsent = false;
  MPI_Isend(&p.out, sizeof(Announcement), MPI_BYTE, rank, kTag, comm_, &p.send);
}

void ArrivalBoard::announce(std::uint64_t seq, std::string_view name) {
  mine_ = Announcement();
  mine_.seq = seq;
  std::memcpy(mine_.name, name.data(), std::min(name.size(), sizeof mine_.name - 1));
  heartbeat();
}

void ArrivalBoard::heartbeat() {
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
    if (r == rank_) continue;
    Peer& p = peers_[static_cast<std::size_t>(r)];
    p.latest = mine_;
    p.unsent = true;
  }
  poll();
}

void ArrivalBoard::poll() {
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
    if (r == rank_) continue;
    Peer& p = peers_[static_cast<std::size_t>(r)];
    for (int done = 1; done && p.recv != MPI_REQUEST_NULL;) {
      MPI_Test(&p.recv, &done, MPI_STATUS_IGNORE);
      if (!done) break;
      p.heard = std::chrono::steady_clock::now();
      if (p.in.seq > p.seen) {
        p.seen = p.in.seq;
        p.seen_name = std::string(p.in.name, strnlen(p.in.name, sizeof p.in.name));
      }
      MPI_Irecv(&p.in, sizeof(Announcement), MPI_BYTE, r, kTag, comm_, &p.recv);
    }
    if (p.unsent) {
      int done = 1;
      if (p.send != MPI_REQUEST_NULL) MPI_Test(&p.send, &done, MPI_STATUS_IGNORE);
      if (done) send(r, p);
    }
  }
}

std::string ArrivalBoard::late(std::uint64_t seq, double silent_after) const {
  const auto now = std::chrono::steady_clock::now();
  std::string out;
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
    const Peer& p = peers_[static_cast<std::size_t>(r)];
    if (r == rank_) continue;
    const double silent = std::chrono::duration<double>(now - p.heard).count();
    std::string what;
    if (p.seen == 0)
      what = "has not arrived (no collective yet)";
    else if (p.seen < seq)
      what = "has not arrived (last at #" + std::to_string(p.seen) + " '" + p.seen_name + "')";
    else if (silent > silent_after)
      what = "reached it but has not answered for " + std::to_string(static_cast<int>(silent)) +
             " s (stopped, or stuck inside MPI)";
    else
      continue;
    out += (out.empty() ? "rank " : "; rank ") + std::to_string(r) + " " + what;
  }
  return out;
}

}  // namespace dtnn_mpi
