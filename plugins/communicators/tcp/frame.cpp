#include "frame.hpp"

#include <cstring>

#include "dtnn/error.hpp"
#include "little_endian.hpp"

namespace dtnn_tcp {

using dtnn::Error;
using dtnn_net::get_le;
using dtnn_net::put_le;

namespace {

constexpr unsigned char kMagic[4] = {'D', 'T', 'N', 'N'};

}  // namespace

const char* to_string(FrameType type) {
  switch (type) {
    case FrameType::hello:
      return "hello";
    case FrameType::welcome:
      return "welcome";
    case FrameType::refusal:
      return "refusal";
    case FrameType::data:
      return "data";
  }
  return "unknown";
}

std::array<unsigned char, kHeaderBytes> encode_header(const FrameHeader& header) {
  std::array<unsigned char, kHeaderBytes> out{};
  std::memcpy(out.data(), kMagic, 4);
  out[4] = kProtocolVersion;
  out[5] = static_cast<unsigned char>(header.type);
  put_le(out.data() + 8, header.seq, 8);
  put_le(out.data() + 16, header.length, 8);
  return out;
}

FrameHeader decode_header(std::span<const unsigned char, kHeaderBytes> bytes) {
  if (std::memcmp(bytes.data(), kMagic, 4) != 0)
    throw Error("sent bytes that are not a dtnn frame (no \"DTNN\" header): not a dtnn peer?");
  if (bytes[4] != kProtocolVersion)
    throw Error("speaks dtnn's tcp protocol version " + std::to_string(bytes[4]) + ", this rank " +
                std::to_string(kProtocolVersion) + " (every rank must run the same dtnn)");
  if (bytes[5] < 1 || bytes[5] > 4 || bytes[6] != 0 || bytes[7] != 0)
    throw Error("sent a frame of unknown type " + std::to_string(bytes[5]));
  return {static_cast<FrameType>(bytes[5]), get_le(bytes.data() + 8, 8),
          get_le(bytes.data() + 16, 8)};
}

void expect_frame(const FrameHeader& got, FrameType type, std::uint64_t seq, std::uint64_t length,
                  bool length_is_exact) {
  if (got.type != type)
    throw Error(std::string("sent a ") + to_string(got.type) + " frame where a " + to_string(type) +
                " frame was due");
  if (got.seq != seq)
    throw Error("sent a frame of collective #" + std::to_string(got.seq) + " during collective #" +
                std::to_string(seq) + " (the ranks run different steps)");
  if (length_is_exact ? got.length != length : got.length > length)
    throw Error("sent a " + std::string(to_string(type)) + " frame of " +
                std::to_string(got.length) + " bytes where " + (length_is_exact ? "" : "at most ") +
                std::to_string(length) +
                " were due (the ranks exchange different sizes: different models?)");
}

std::vector<unsigned char> encode_hello(const Hello& hello) {
  std::vector<unsigned char> out(8);
  put_le(out.data(), hello.rank, 4);
  put_le(out.data() + 4, hello.world_size, 4);
  return out;
}

Hello decode_hello(std::span<const unsigned char> payload) {
  if (payload.size() != 8)
    throw Error("sent a hello of " + std::to_string(payload.size()) + " bytes (8 expected)");
  return {static_cast<std::uint32_t>(get_le(payload.data(), 4)),
          static_cast<std::uint32_t>(get_le(payload.data() + 4, 4))};
}

}  // namespace dtnn_tcp
