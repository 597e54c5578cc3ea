// One gRPC stream between rank 0 and another rank, as dtnn_net::Star's link. A thread reads the
// stream's frames into an inbox, where receive() waits for the one due until the collective's
// deadline (gRPC's blocking Read has none); another writes what send() queued (a peer that stops
// reading blocks that thread, not the collective). A stream that ends, or a peer silent past the
// deadline, is dtnn_net::PeerGone; a frame that is not the one due is an Error naming the peer.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "deadline.hpp"
#include "star.pb.h"

namespace dtnn_grpc {

using dtnn_net::Deadline;

class Link {
 public:
  // What the link does with its stream (a server's or a client's): read the next frame (false:
  // the stream ended), write one (false: it broke), say that no more writes come (the client's
  // half-close), cancel the call (reads and writes then return false) and, once both threads are
  // done, finish it. end_by (rank 0's, so that its last results reach every rank before it ends
  // the calls): at the close, wait until then for the peer to end its side first; one time for
  // all of rank 0's streams, fixed when the first closes.
  struct Stream {
    std::function<bool(Frame&)> read;
    std::function<bool(const Frame&)> write;
    std::function<void()> writes_done;
    std::function<void()> cancel;
    std::function<void()> finish;
    std::function<std::chrono::steady_clock::time_point()> end_by;
  };

  Link(Stream stream, std::string peer, bool secure);
  // Writes what is queued (a few seconds at most), half-closes, waits for the peer's end until
  // end_by (unless the peer is gone), then cancels the call and joins both threads.
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  void send(const void* data, std::size_t bytes, std::uint64_t seq, Deadline deadline);
  void receive(void* into, std::size_t bytes, std::uint64_t seq, Deadline deadline);
  // Start-up: queues a control frame; waits for the next frame (a PeerGone past the deadline).
  void send_control(Frame::Type type, const std::string& payload);
  Frame next(Deadline deadline, const char* doing);

  bool secure() const { return secure_; }
  const std::string& peer() const { return peer_; }

 private:
  void read_frames();
  void write_frames();
  void queue(Frame frame);

  Stream stream_;
  std::string peer_;
  bool secure_;
  std::mutex mutex_;
  std::condition_variable arrived_, queued_;
  std::deque<Frame> inbox_, outbox_;
  std::condition_variable idle_;
  bool writing_ = false;   // the writer is in a write
  bool ended_ = false;     // the stream gave its last frame
  bool broken_ = false;    // a write failed
  bool gone_ = false;      // a receive found the peer gone (closed, or silent past the deadline)
  bool stopping_ = false;  // the destructor runs
  std::thread reader_, writer_;
};

}  // namespace dtnn_grpc
