// ArrivalBoard: what each rank knows of the others' progress through the collectives, for the
// timeout report. On entering collective #seq a rank sends (seq, name) to every other rank on a
// communicator of its own; a waiting rank reads what has come in. A rank that is hung or stopped
// sends nothing more, so when a wait times out the ranks whose last announcement is older than
// the collective are the ones that have not arrived. Waiting ranks repeat their announcement
// (heartbeat), so a rank that reached the collective and then stopped answering (stopped, or
// stuck inside MPI) shows as silent.
//
// Cost: size() - 1 messages of 64 bytes per collective and rank, sent eagerly; nothing at all
// when parallel.timeout_s is 0.
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtnn_mpi {

struct Announcement {
  std::uint64_t seq = 0;  // 0: none yet
  char name[56] = {};
};

class ArrivalBoard {
 public:
  // comm: a communicator used for nothing else.
  ArrivalBoard(MPI_Comm comm, int rank, int size);
  ~ArrivalBoard();
  ArrivalBoard(const ArrivalBoard&) = delete;
  ArrivalBoard& operator=(const ArrivalBoard&) = delete;

  // This rank has entered collective #seq.
  void announce(std::uint64_t seq, std::string_view name);
  // Repeats this rank's last announcement: it is alive, waiting.
  void heartbeat();
  // Takes in what the others have announced and sends what a busy send held back.
  void poll();
  // The ranks holding up collective #seq: those not at it yet ("1 has not arrived (last at #55
  // 'training totals')") and those at it but not heard from for silent_after seconds.
  std::string late(std::uint64_t seq, double silent_after) const;

 private:
  struct Peer {
    Announcement in, out, latest;  // being received, being sent, newest not yet sent
    MPI_Request recv = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
    std::uint64_t seen = 0;  // their newest seq
    std::string seen_name;
    std::chrono::steady_clock::time_point heard;  // when their last message came
    bool unsent = false;                          // latest is newer than the send in flight
  };
  void send(int rank, Peer& p);

  MPI_Comm comm_;
  int rank_;
  Announcement mine_;
  std::vector<Peer> peers_;  // by rank; this rank's entry unused
};

}  // namespace dtnn_mpi
