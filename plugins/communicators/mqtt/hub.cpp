#include "hub.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "dtnn/error.hpp"
#include "sum_into.hpp"

namespace dtnn_mqtt {

using dtnn::DType;
using dtnn::Error;

Hub::Hub(std::unique_ptr<BrokerLink> link, int rank, int size, const Session& session,
         std::size_t chunk_bytes, std::vector<std::uint64_t> nonces)
    : link_(std::move(link)),
      rank_(rank),
      size_(size),
      session_(session),
      chunk_bytes_(chunk_bytes),
      nonces_(std::move(nonces)),
      departures_(size) {}

bool Hub::reach(int r, void* into, std::size_t bytes, std::size_t align, std::uint64_t seq,
                Deadline deadline) {
  const Deadline listen = departures_.listening(deadline);
  return departures_.reach(r, seq, [&] { receive(r, into, bytes, align, seq, listen); });
}

void Hub::send(const void* data, std::size_t bytes, std::uint64_t seq) {
  Header h;
  h.type = MessageType::data;
  h.from = static_cast<std::uint32_t>(rank_);
  h.to = rank_ == 0 ? kEveryRank : 0;
  h.session = session_;
  h.seq = seq;
  h.total = bytes;
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t offset = 0;
  do {
    const std::size_t n = std::min(chunk_bytes_, bytes - offset);
    h.offset = offset;
    link_->publish(encode_message(h, p + offset, n));
    offset += n;
  } while (offset < bytes);
}

void Hub::receive(int sender, void* into, std::size_t bytes, std::size_t align, std::uint64_t seq,
                  Deadline deadline) {
  auto* out = static_cast<unsigned char*>(into);
  std::size_t received = 0;
  for (bool done = false; !done;) {
    const std::vector<unsigned char> payload = link_->next(sender, deadline, "receiving");
    try {
      const Message m = decode_message(payload);
      const Header& h = m.header;
      if (h.type == MessageType::gone) {
        const auto who = static_cast<std::size_t>(sender);
        if (who < nonces_.size() && decode_answer(m.bytes).nonce != nonces_[who]) continue;
        throw PeerGone("left the run (its connection to the broker closed)");
      }
      // Answers to other ranks' hellos, late: not this rank's to read.
      if ((h.type == MessageType::welcome || h.type == MessageType::refusal) &&
          h.to != static_cast<std::uint32_t>(rank_))
        continue;
      if (h.type != MessageType::data)
        throw Error(std::string("sent a ") + to_string(h.type) +
                    " message where a data message was due");
      if (h.session != session_) throw Error("sent a message of another run (its session differs)");
      if (h.from != static_cast<std::uint32_t>(sender))
        throw Error("sent a message that claims to be rank " + std::to_string(h.from) + "'s");
      if (h.seq != seq)
        throw Error("sent a message of collective #" + std::to_string(h.seq) +
                    " during collective #" + std::to_string(seq));
      if (h.total != bytes)
        throw Error("sent a transfer of " + std::to_string(h.total) + " bytes where " +
                    std::to_string(bytes) + " were due");
      if (h.offset != received)
        throw Error("sent bytes at offset " + std::to_string(h.offset) + " where offset " +
                    std::to_string(received) + " was due");
      if (m.bytes.size() % align != 0 || (m.bytes.empty() && bytes > 0))
        throw Error("sent a chunk of " + std::to_string(m.bytes.size()) +
                    " bytes (a positive multiple of " + std::to_string(align) + " due)");
      if (!m.bytes.empty()) std::memcpy(out + received, m.bytes.data(), m.bytes.size());
      received += m.bytes.size();
      done = received == bytes;
    } catch (const PeerGone& e) {
      throw PeerGone("mqtt: " + link_->name(sender) + ": " + e.what());
    } catch (const Error& e) {
      throw Error("mqtt: " + link_->name(sender) + ": " + e.what());
    }
  }
}

void Hub::allreduce_sum(void* data, std::size_t count, DType dtype, std::uint64_t seq,
                        Deadline deadline) {
  const std::size_t element = dtype_size(dtype), bytes = count * element;
  if (rank_ != 0) {
    send(data, bytes, seq);
    receive(0, data, bytes, element, seq, deadline);
    return;
  }
  // Each rank's contribution is checked whole before any of it is summed: a transfer that fails
  // midway leaves rank 0's values as they were.
  incoming_.resize(bytes);
  for (int r = 1; r < size_; ++r)
    if (reach(r, incoming_.data(), bytes, element, seq, deadline))
      dtnn_net::sum_into(data, incoming_.data(), count, dtype);
  send(data, bytes, seq);
}

void Hub::broadcast(void* data, std::size_t count, DType dtype, int root, std::uint64_t seq,
                    Deadline deadline) {
  const std::size_t element = dtype_size(dtype), bytes = count * element;
  if (rank_ == 0) {
    if (root != 0 && !reach(root, data, bytes, element, seq, deadline))
      throw Error("mqtt: rank " + std::to_string(root) + ", the root of broadcast #" +
                  std::to_string(seq) + ", has left");
    send(data, bytes, seq);
    return;
  }
  if (rank_ == root) send(data, bytes, seq);
  receive(0, data, bytes, element, seq, deadline);  // the root too: rank 0's copy is for all
}

void Hub::allgather(const void* send_data, void* recv, std::size_t count, DType dtype,
                    std::uint64_t seq, Deadline deadline) {
  const std::size_t element = dtype_size(dtype), bytes = count * element;
  const std::size_t all = bytes * static_cast<std::size_t>(size_);
  auto* out = static_cast<unsigned char*>(recv);
  if (rank_ != 0) {
    send(send_data, bytes, seq);
    receive(0, out, all, element, seq, deadline);
    return;
  }
  if (bytes > 0 && out != send_data) std::memmove(out, send_data, bytes);
  for (int r = 1; r < size_; ++r) {
    unsigned char* slot = out + static_cast<std::size_t>(r) * bytes;
    if (!reach(r, slot, bytes, element, seq, deadline) && bytes > 0)
      std::memset(slot, 0, bytes);  // a rank that left: zeros, also where it left mid-way
  }
  send(out, all, seq);
}

}  // namespace dtnn_mqtt
