#include "frame_checks.hpp"

#include "dtnn/error.hpp"

namespace dtnn_grpc {

namespace {

const char* type_name(int type) {
  switch (type) {
    case Frame::HELLO:
      return "hello";
    case Frame::WELCOME:
      return "welcome";
    case Frame::REFUSAL:
      return "refusal";
    case Frame::DATA:
      return "data";
    default:
      return "unknown";
  }
}

std::uint32_t little_endian_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::string hello_payload(std::uint32_t rank, std::uint32_t world_size) {
  std::string p(8, '\0');
  for (std::size_t i = 0; i < 4; ++i) {
    p[i] = static_cast<char>((rank >> (8 * i)) & 0xFF);
    p[4 + i] = static_cast<char>((world_size >> (8 * i)) & 0xFF);
  }
  return p;
}

std::string read_hello(const Frame& frame, Hello& hello) {
  if (frame.type() != Frame::HELLO || frame.payload().size() != 8)
    return std::string("its first frame is not a hello of 8 bytes (a ") + type_name(frame.type()) +
           " frame of " + std::to_string(frame.payload().size()) + " bytes)";
  hello = {little_endian_u32(frame.payload(), 0), little_endian_u32(frame.payload(), 4)};
  return "";
}

void expect_data(const Frame& frame, std::uint64_t seq, std::size_t bytes,
                 const std::string& peer) {
  if (frame.type() != Frame::DATA || frame.seq() != seq || frame.payload().size() != bytes)
    throw dtnn::Error("grpc: " + peer + ": sent a " + type_name(frame.type()) +
                      " frame of collective #" + std::to_string(frame.seq()) + ", " +
                      std::to_string(frame.payload().size()) + " bytes, where the data of " +
                      "collective #" + std::to_string(seq) + ", " + std::to_string(bytes) +
                      " bytes, was due (does it run the same steps?)");
}

}  // namespace dtnn_grpc
