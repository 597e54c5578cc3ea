// The mqtt communicator's messages. Every MQTT payload it publishes is a 56-byte header, then the
// message's bytes. The header, little-endian:
//
//   bytes 0-3    "DTMQ"
//   byte  4      protocol version (kProtocolVersion)
//   byte  5      type (MessageType)
//   bytes 6-7    zero
//   bytes 8-11   the sender's rank
//   bytes 12-15  the rank it is for (kEveryRank: every rank but the sender)
//   bytes 16-31  the run's session: 16 random bytes rank 0 draws at start-up
//   bytes 32-39  the collective's number (0 while the ranks meet)
//   bytes 40-47  the whole transfer's length in bytes
//   bytes 48-55  where this message's bytes start in the transfer
//
// A transfer longer than one message's limit is sent as consecutive chunks, each naming its offset.
// A session message (rank 0's, retained on <topic>/session) carries the world size; a hello (a
// rank's answer) the world size it expects and a nonce of its own; a welcome or a refusal that
// nonce (and a refusal the reason as text); a gone message (a rank's last will, or its goodbye)
// the nonce of the process that left; data messages a collective's elements.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dtnn_mqtt {

enum class MessageType : std::uint8_t {
  session = 1,
  hello = 2,
  welcome = 3,
  refusal = 4,
  data = 5,
  gone = 6
};

inline constexpr std::size_t kHeaderBytes = 56;
inline constexpr std::uint8_t kProtocolVersion = 1;
inline constexpr std::uint32_t kEveryRank = 0xffffffffu;
using Session = std::array<unsigned char, 16>;

struct Header {
  MessageType type = MessageType::data;
  std::uint32_t from = 0, to = kEveryRank;
  Session session{};
  std::uint64_t seq = 0;
  std::uint64_t total = 0;   // the transfer's length
  std::uint64_t offset = 0;  // this message's place in it
};

// A message's header followed by its bytes.
std::vector<unsigned char> encode_message(const Header& header, const void* bytes,
                                          std::size_t length);

struct Message {
  Header header;
  std::span<const unsigned char> bytes;  // into the payload decoded
};

// The message a payload holds, or a dtnn::Error saying what it is instead (not a dtnn message,
// another protocol version, an unknown type, bytes past the transfer's end); the caller names the
// sender.
Message decode_message(std::span<const unsigned char> payload);

// Hello and session payloads: the world size, and (hello) the joining process's nonce.
std::vector<unsigned char> encode_hello(std::uint32_t world_size, std::uint64_t nonce);
struct Hello {
  std::uint32_t world_size = 0;
  std::uint64_t nonce = 0;
};
Hello decode_hello(std::span<const unsigned char> bytes);  // a session's: nonce 0

// Welcome, refusal and gone payloads: the nonce of the hello answered (of the process gone), and
// (refusal) why.
std::vector<unsigned char> encode_answer(std::uint64_t nonce, const std::string& reason);
struct Answer {
  std::uint64_t nonce = 0;
  std::string reason;
};
Answer decode_answer(std::span<const unsigned char> bytes);

const char* to_string(MessageType type);

}  // namespace dtnn_mqtt
