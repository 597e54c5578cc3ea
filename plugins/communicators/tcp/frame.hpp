// The tcp communicator's wire format. Every message is a frame: a 24-byte header, then `length`
// bytes of payload. The header, little-endian:
//
//   bytes 0-3   "DTNN"
//   byte  4     protocol version (kProtocolVersion)
//   byte  5     type (FrameType)
//   bytes 6-7   zero
//   bytes 8-15  the collective's number (0 for the handshake)
//   bytes 16-23 the payload's length in bytes
//
// A hello (a joining rank's first frame) carries its rank and the world size it expects; a
// refusal carries the reason as text; data frames carry a collective's elements.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dtnn_tcp {

enum class FrameType : std::uint8_t { hello = 1, welcome = 2, refusal = 3, data = 4 };

inline constexpr std::size_t kHeaderBytes = 24;
inline constexpr std::uint8_t kProtocolVersion = 1;
inline constexpr std::uint64_t kMaxControlBytes = 1024;  // hello, welcome and refusal payloads

struct FrameHeader {
  FrameType type = FrameType::data;
  std::uint64_t seq = 0;
  std::uint64_t length = 0;
};

std::array<unsigned char, kHeaderBytes> encode_header(const FrameHeader& header);

// The header those bytes hold, or a dtnn::Error saying what they are instead (not a dtnn peer,
// another protocol version, an unknown type); the caller names the peer.
FrameHeader decode_header(std::span<const unsigned char, kHeaderBytes> bytes);

// What a frame must be where it is read: its type, its collective's number, and its length
// (exactly `length`, or at most kMaxControlBytes for control frames when length_is_exact is
// false). A dtnn::Error names what was expected and what came.
void expect_frame(const FrameHeader& got, FrameType type, std::uint64_t seq, std::uint64_t length,
                  bool length_is_exact);

struct Hello {
  std::uint32_t rank = 0, world_size = 0;
};
std::vector<unsigned char> encode_hello(const Hello& hello);
Hello decode_hello(std::span<const unsigned char> payload);

const char* to_string(FrameType type);

}  // namespace dtnn_tcp
