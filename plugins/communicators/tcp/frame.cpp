#include "frame.hpp"

#include <cstring>

#include "dtnn/error.hpp"

namespace dtnn_tcp {

using dtnn::Error;

namespace {

constexpr unsigned char kMagic[4] = {'D', 'T', 'N', 'N'};

void put_u64(unsigned char* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint64_t get_u64(const unsigned char* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return v;
}

void put_u32(unsigned char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint32_t get_u32(const unsigned char* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(in[i]) << (8 * i);
  return v;
}

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
  put_u64(out.data() + 8, header.seq);
  put_u64(out.data() + 16, header.length);
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
  return {static_cast<FrameType>(bytes[5]), get_u64(bytes.data() + 8), get_u64(bytes.data() + 16)};
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
  put_u32(out.data(), hello.rank);
  put_u32(out.data() + 4, hello.world_size);
  return out;
}

Hello decode_hello(std::span<const unsigned char> payload) {
  if (payload.size() != 8)
    throw Error("sent a hello of " + std::to_string(payload.size()) + " bytes (8 expected)");
  return {get_u32(payload.data()), get_u32(payload.data() + 4)};
}

}  // namespace dtnn_tcp
