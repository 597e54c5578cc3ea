#include "star.hpp"

#include <cstring>

#include "dtnn/error.hpp"
#include "sum_into.hpp"

namespace dtnn_tcp {

using dtnn::DType;
using dtnn::Error;

Star::Star(int rank, int size, std::vector<std::unique_ptr<Stream>> links)
    : rank_(rank), size_(size), links_(std::move(links)) {}

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
  for (int r = 1; r < size_; ++r) {
    receive(link(r), incoming_.data(), bytes, seq, deadline);
    dtnn_net::sum_into(data, incoming_.data(), count, dtype);
  }
  for (int r = 1; r < size_; ++r) send(link(r), data, bytes, seq, deadline);
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
  if (root != 0) receive(link(root), data, bytes, seq, deadline);
  for (int r = 1; r < size_; ++r)
    if (r != root) send(link(r), data, bytes, seq, deadline);
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
  for (int r = 1; r < size_; ++r)
    receive(link(r), out + static_cast<std::size_t>(r) * bytes, bytes, seq, deadline);
  for (int r = 1; r < size_; ++r) send(link(r), out, all, seq, deadline);
}

}  // namespace dtnn_tcp
