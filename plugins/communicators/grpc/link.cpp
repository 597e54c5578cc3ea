#include "link.hpp"

#include <chrono>
#include <cstring>
#include <utility>

#include "departures.hpp"
#include "dtnn/error.hpp"
#include "frame_checks.hpp"

namespace dtnn_grpc {

using dtnn_net::PeerGone;

Link::Link(Stream stream, std::string peer, bool secure)
    : stream_(std::move(stream)), peer_(std::move(peer)), secure_(secure) {
  reader_ = std::thread([this] { read_frames(); });
  writer_ = std::thread([this] { write_frames(); });
}

Link::~Link() {
  constexpr auto kGrace = std::chrono::seconds(5);
  bool drained;
  {
    std::unique_lock lock(mutex_);
    drained = idle_.wait_for(lock, kGrace,
                             [&] { return (outbox_.empty() && !writing_) || broken_ || gone_; }) &&
              !broken_ && !gone_;
  }
  if (drained) stream_.writes_done();
  {
    std::unique_lock lock(mutex_);
    if (drained && stream_.end_by)
      arrived_.wait_until(lock, stream_.end_by(), [&] { return ended_; });
    stopping_ = true;
  }
  queued_.notify_all();
  stream_.cancel();
  reader_.join();
  writer_.join();
  stream_.finish();
}

void Link::read_frames() {
  for (;;) {
    Frame frame;
    const bool got = stream_.read(frame);
    std::lock_guard lock(mutex_);
    if (!got) {
      ended_ = true;
      arrived_.notify_all();
      return;
    }
    inbox_.push_back(std::move(frame));
    arrived_.notify_all();
  }
}

void Link::write_frames() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_.wait(lock, [&] { return stopping_ || !outbox_.empty(); });
    if (stopping_ || broken_) return;
    Frame frame = std::move(outbox_.front());
    outbox_.pop_front();
    writing_ = true;
    lock.unlock();
    const bool wrote = stream_.write(frame);
    lock.lock();
    writing_ = false;
    idle_.notify_all();
    if (!wrote) {
      broken_ = true;
      arrived_.notify_all();
      return;
    }
  }
}

void Link::queue(Frame frame) {
  {
    std::lock_guard lock(mutex_);
    if (broken_ || ended_) throw PeerGone("grpc: " + peer_ + ": closed the stream while sending");
    outbox_.push_back(std::move(frame));
  }
  queued_.notify_one();
}

void Link::send(const void* data, std::size_t bytes, std::uint64_t seq, Deadline) {
  Frame frame;
  frame.set_type(Frame::DATA);
  frame.set_seq(seq);
  frame.set_payload(static_cast<const char*>(data), bytes);
  queue(std::move(frame));
}

void Link::send_control(Frame::Type type, const std::string& payload) {
  Frame frame;
  frame.set_type(type);
  frame.set_payload(payload);
  queue(std::move(frame));
}

Frame Link::next(Deadline deadline, const char* doing) {
  std::unique_lock lock(mutex_);
  auto ready = [&] { return !inbox_.empty() || ended_ || broken_; };
  if (deadline.limited()) {
    if (!arrived_.wait_until(lock, deadline.at, ready)) {
      gone_ = true;
      idle_.notify_all();
      throw PeerGone("grpc: " + peer_ + ": no answer within " + deadline.seconds_text() +
                     " s while " + doing);
    }
  } else {
    arrived_.wait(lock, ready);
  }
  if (inbox_.empty()) {
    gone_ = true;
    idle_.notify_all();
    throw PeerGone("grpc: " + peer_ + ": closed the stream while " + doing);
  }
  Frame frame = std::move(inbox_.front());
  inbox_.pop_front();
  return frame;
}

void Link::receive(void* into, std::size_t bytes, std::uint64_t seq, Deadline deadline) {
  const Frame frame = next(deadline, "receiving");
  expect_data(frame, seq, bytes, peer_);
  if (bytes > 0) std::memcpy(into, frame.payload().data(), bytes);
}

}  // namespace dtnn_grpc
