#include "meeting.hpp"

#include <random>
#include <set>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/log.hpp"

namespace dtnn_mqtt {

using dtnn::Error;

std::uint64_t new_nonce() {
  std::mt19937_64 random{std::random_device{}()};
  return random() | 1;  // never 0, rank 0's
}

Session new_session() {
  std::random_device random;
  Session s;
  for (auto& byte : s) byte = static_cast<unsigned char>(random() & 0xff);
  return s;
}

std::vector<std::uint64_t> welcome_ranks(BrokerLink& link, int world_size, const Session& session,
                                         Deadline deadline) {
  Header announce;
  announce.type = MessageType::session;
  announce.session = session;
  const auto size_bytes = encode_hello(static_cast<std::uint32_t>(world_size), 0);
  announce.total = size_bytes.size();
  link.publish_session(encode_message(announce, size_bytes.data(), size_bytes.size()));

  std::map<int, std::uint64_t> joined;  // rank -> the nonce of the hello let in
  auto answer = [&](MessageType type, int rank, std::uint64_t nonce, const std::string& reason) {
    Header h;
    h.type = type;
    h.to = static_cast<std::uint32_t>(rank);
    h.session = session;
    const auto bytes = encode_answer(nonce, reason);
    h.total = bytes.size();
    link.publish(encode_message(h, bytes.data(), bytes.size()));
  };
  while (static_cast<int>(joined.size()) < world_size - 1) {
    int sender = 0;
    std::vector<unsigned char> payload;
    try {
      payload = link.next_from_any(sender, deadline, "the ranks meet");
    } catch (const Error& e) {
      std::string missing;
      for (int r = 1; r < world_size; ++r)
        if (!joined.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      throw Error(std::string(e.what()) + "; rank(s) " + missing + " did not join");
    }
    Message m;
    Hello hello;
    try {
      m = decode_message(payload);
      if (m.header.type == MessageType::gone) {
        const auto it = joined.find(sender);
        if (it != joined.end() && it->second == decode_answer(m.bytes).nonce) joined.erase(it);
        if (it != joined.end() && !joined.count(sender))
          dtnn::log_warning("mqtt: " + link.name(sender) + " left before every rank was in");
        continue;
      }
      if (m.header.type != MessageType::hello)
        throw Error(std::string("sent a ") + to_string(m.header.type) +
                    " message while the ranks meet");
      if (m.header.session != session)
        continue;  // an older announcement's: it will say hello again
      if (m.header.from != static_cast<std::uint32_t>(sender))
        throw Error("claims to be rank " + std::to_string(m.header.from));
      hello = decode_hello(m.bytes);
    } catch (const Error& e) {
      dtnn::log_warning("mqtt: " + link.name(sender) + ": " + e.what() + ": ignored");
      continue;
    }
    std::string refusal;
    if (hello.world_size != static_cast<std::uint32_t>(world_size))
      refusal = "it expects " + std::to_string(hello.world_size) + " ranks, rank 0 " +
                std::to_string(world_size) + " (--world-size differs)";
    else if (joined.count(sender) && joined[sender] != hello.nonce)
      refusal = "rank " + std::to_string(sender) + " is taken by another process";
    if (!refusal.empty()) {
      dtnn::log_warning(
          "mqtt: " + link.name(sender) + ": " + refusal + ": refused; still waiting for " +
          std::to_string(world_size - 1 - static_cast<int>(joined.size())) + " rank(s)");
      answer(MessageType::refusal, sender, hello.nonce, refusal);
      continue;
    }
    joined[sender] = hello.nonce;
  }
  std::vector<std::uint64_t> nonces(static_cast<std::size_t>(world_size), 0);
  for (const auto& [rank, nonce] : joined) {
    answer(MessageType::welcome, rank, nonce, "");
    nonces[static_cast<std::size_t>(rank)] = nonce;
  }
  link.publish_session({});
  return nonces;
}

Session join_run(BrokerLink& link, int rank, int world_size, std::uint64_t nonce,
                 Deadline deadline) {
  std::optional<Session> session;
  for (;;) {
    // The announcement (and any newer one), then rank 0's answer to this rank's hello.
    int from = 0;
    std::vector<unsigned char> payload;
    try {
      payload = link.next_from_any(from, deadline,
                                   session ? "waiting for rank 0 to let every rank in"
                                           : "waiting for rank 0's announcement");
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " (is rank 0 running, with the same broker and topic?)");
    }
    Message m;
    try {
      m = decode_message(payload);
    } catch (const Error& e) {
      throw Error("mqtt: " + link.name(from) + ": " + e.what());
    }
    if (m.header.type == MessageType::session) {
      const Hello announced = decode_hello(m.bytes);
      if (announced.world_size != static_cast<std::uint32_t>(world_size))
        throw Error("mqtt: rank 0 runs " + std::to_string(announced.world_size) +
                    " ranks, this rank expects " + std::to_string(world_size) +
                    " (--world-size differs)");
      session = m.header.session;
      Header h;
      h.type = MessageType::hello;
      h.from = static_cast<std::uint32_t>(rank);
      h.to = 0;
      h.session = *session;
      const auto bytes = encode_hello(static_cast<std::uint32_t>(world_size), nonce);
      h.total = bytes.size();
      link.publish(encode_message(h, bytes.data(), bytes.size()));
      continue;
    }
    if (!session || from == BrokerLink::kSessionSlot) continue;
    if (m.header.to != static_cast<std::uint32_t>(rank) || m.header.session != *session) continue;
    if (m.header.type != MessageType::welcome && m.header.type != MessageType::refusal) continue;
    const Answer a = decode_answer(m.bytes);
    if (a.nonce != nonce && m.header.type == MessageType::refusal) continue;  // another's hello
    if (a.nonce != nonce)
      throw Error("mqtt: rank 0 let in another process as rank " + std::to_string(rank) +
                  " (two processes were started as rank " + std::to_string(rank) + ")");
    if (m.header.type == MessageType::refusal)
      throw Error("mqtt: rank 0 refused this rank: " + a.reason);
    return *session;
  }
}

}  // namespace dtnn_mqtt
