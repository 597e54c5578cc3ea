#include "message.hpp"

#include <cstring>

#include "dtnn/error.hpp"
#include "little_endian.hpp"

namespace dtnn_mqtt {

using dtnn::Error;
using dtnn_net::get_le;
using dtnn_net::put_le;

const char* to_string(MessageType type) {
  switch (type) {
    case MessageType::session:
      return "session";
    case MessageType::hello:
      return "hello";
    case MessageType::welcome:
      return "welcome";
    case MessageType::refusal:
      return "refusal";
    case MessageType::data:
      return "data";
    case MessageType::gone:
      return "gone";
  }
  return "unknown";
}

std::vector<unsigned char> encode_message(const Header& h, const void* bytes, std::size_t length) {
  std::vector<unsigned char> out(kHeaderBytes + length);
  std::memcpy(out.data(), "DTMQ", 4);
  out[4] = kProtocolVersion;
  out[5] = static_cast<unsigned char>(h.type);
  put_le(&out[8], h.from, 4);
  put_le(&out[12], h.to, 4);
  std::memcpy(&out[16], h.session.data(), h.session.size());
  put_le(&out[32], h.seq, 8);
  put_le(&out[40], h.total, 8);
  put_le(&out[48], h.offset, 8);
  if (length > 0) std::memcpy(out.data() + kHeaderBytes, bytes, length);
  return out;
}

Message decode_message(std::span<const unsigned char> payload) {
  if (payload.size() < kHeaderBytes || std::memcmp(payload.data(), "DTMQ", 4) != 0)
    throw Error("sent a message of " + std::to_string(payload.size()) +
                " bytes that is not a dtnn message");
  const unsigned char* p = payload.data();
  if (p[4] != kProtocolVersion)
    throw Error("speaks protocol version " + std::to_string(p[4]) + ", this rank " +
                std::to_string(kProtocolVersion) + " (another dtnn version)");
  if (p[5] < static_cast<unsigned char>(MessageType::session) ||
      p[5] > static_cast<unsigned char>(MessageType::gone))
    throw Error("sent a message of unknown type " + std::to_string(p[5]));
  if (p[6] != 0 || p[7] != 0)
    throw Error("sent a message whose reserved bytes 6-7 are not zero (another dtnn version?)");
  Message m;
  m.header.type = static_cast<MessageType>(p[5]);
  m.header.from = static_cast<std::uint32_t>(get_le(p + 8, 4));
  m.header.to = static_cast<std::uint32_t>(get_le(p + 12, 4));
  std::memcpy(m.header.session.data(), p + 16, m.header.session.size());
  m.header.seq = get_le(p + 32, 8);
  m.header.total = get_le(p + 40, 8);
  m.header.offset = get_le(p + 48, 8);
  m.bytes = payload.subspan(kHeaderBytes);
  if (m.header.offset > m.header.total || m.bytes.size() > m.header.total - m.header.offset)
    throw Error("sent " + std::to_string(m.bytes.size()) + " bytes at offset " +
                std::to_string(m.header.offset) + " of a " + std::to_string(m.header.total) +
                "-byte transfer");
  return m;
}

std::vector<unsigned char> encode_hello(std::uint32_t world_size, std::uint64_t nonce) {
  std::vector<unsigned char> out(12);
  put_le(&out[0], world_size, 4);
  put_le(&out[4], nonce, 8);
  return out;
}

Hello decode_hello(std::span<const unsigned char> bytes) {
  if (bytes.size() != 12)
    throw Error("sent a hello of " + std::to_string(bytes.size()) + " bytes where 12 were due");
  return {static_cast<std::uint32_t>(get_le(bytes.data(), 4)), get_le(bytes.data() + 4, 8)};
}

std::vector<unsigned char> encode_answer(std::uint64_t nonce, const std::string& reason) {
  std::vector<unsigned char> out(8 + reason.size());
  put_le(&out[0], nonce, 8);
  std::memcpy(out.data() + 8, reason.data(), reason.size());
  return out;
}

Answer decode_answer(std::span<const unsigned char> bytes) {
  if (bytes.size() < 8 || bytes.size() > 8 + 1024)
    throw Error("sent an answer of " + std::to_string(bytes.size()) + " bytes (8 to 1032 due)");
  return {get_le(bytes.data(), 8),
          std::string(reinterpret_cast<const char*>(bytes.data()) + 8, bytes.size() - 8)};
}

}  // namespace dtnn_mqtt
