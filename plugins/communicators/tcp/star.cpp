#include "star.hpp"

#include <cstring>

#include "dtnn/error.hpp"
#include "sum_into.hpp"

namespace dtnn_tcp {

using dtnn::DType;
using dtnn::Error;

Star::Star(int rank, int size, std::vector<std::unique_ptr<Stream>> links)
    : rank_(rank), size_(size), links_(std::move(links)), departures_(size) {}

template <class Io>
bool Star::reach(int r, std::uint64_t seq, Io io) {
  if (departures_.reach(r, seq, io)) return true;
  links_[static_cast<std::size_t>(r)].reset();
  return false;
}

bool Star::secure() const {
  for (const auto& l : links_)
    if (l && !l->secure()) return false;
  return true;
}

void Star::send(Stream& to, const void* data, std::size_t bytes, std::uint64_t seq,
                Deadline deadline) {
  to.send_frame({FrameType::data, seq, bytes}, data, deadline);
}

void Star::receive(Stream& from, void* into, std::size_t bytes, std::uint64_t seq,
                   Deadline deadline) {
  const FrameHeader h = from.read_header(deadline);
  try {
    expect_frame(h, FrameType::data, seq, bytes, true);
  } catch (const Error& e) {
    throw Error("tcp: " + from.peer() + ": " + e.what());
  }
  from.read(into, bytes, deadline);
}

void Star::allreduce_sum(void* data, std::size_t count, DType dtype, std::uint64_t seq,
                         Deadline deadline) {
  const std::size_t bytes = count * dtype_size(dtype);
  if (rank_ != 0) {
    send(link(0), data, bytes, seq, deadline);
    receive(link(0), data, bytes, seq, deadline);
    return;
  }
  incoming_.resize(bytes);
  const Deadline listen = departures_.listening(deadline);
  for (int r = 1; r < size_; ++r)
    if (reach(r, seq, [&] { receive(link(r), incoming_.data(), bytes, seq, listen); }))
      dtnn_net::sum_into(data, incoming_.data(), count, dtype);
  for (int r = 1; r < size_; ++r) reach(r, seq, [&] { send(link(r), data, bytes, seq, deadline); });
}

void Star::broadcast(void* data, std::size_t count, DType dtype, int root, std::uint64_t seq,
                     Deadline deadline) {
  const std::size_t bytes = count * dtype_size(dtype);
  if (rank_ != 0) {
    if (rank_ == root)
      send(link(0), data, bytes, seq, deadline);
    else
      receive(link(0), data, bytes, seq, deadline);
    return;
  }
  if (root != 0 && !reach(root, seq, [&] { receive(link(root), data, bytes, seq, deadline); }))
    throw Error("tcp: rank " + std::to_string(root) + ", the root of broadcast #" +
                std::to_string(seq) + ", has left");
  for (int r = 1; r < size_; ++r)
    if (r != root) reach(r, seq, [&] { send(link(r), data, bytes, seq, deadline); });
}

void Star::allgather(const void* send_data, void* recv, std::size_t count, DType dtype,
                     std::uint64_t seq, Deadline deadline) {
  const std::size_t bytes = count * dtype_size(dtype);
  const std::size_t all = bytes * static_cast<std::size_t>(size_);
  auto* out = static_cast<unsigned char*>(recv);
  if (rank_ != 0) {
    send(link(0), send_data, bytes, seq, deadline);
    receive(link(0), out, all, seq, deadline);
    return;
  }
  if (bytes > 0 && out != send_data) std::memmove(out, send_data, bytes);
  const Deadline listen = departures_.listening(deadline);
  for (int r = 1; r < size_; ++r) {
    unsigned char* slot = out + static_cast<std::size_t>(r) * bytes;
    if (!reach(r, seq, [&] { receive(link(r), slot, bytes, seq, listen); }) && bytes > 0)
      std::memset(slot, 0, bytes);  // a rank that left: zeros, also where it left mid-way
  }
  for (int r = 1; r < size_; ++r) reach(r, seq, [&] { send(link(r), out, all, seq, deadline); });
}

}  // namespace dtnn_tcp
