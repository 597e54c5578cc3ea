#include "frame_checks.hpp"

#include "dtnn/error.hpp"
#include "little_endian.hpp"

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

}  // namespace

std::string hello_payload(std::uint32_t rank, std::uint32_t world_size) {
  unsigned char p[8];
  dtnn_net::put_le(p, rank, 4);
  dtnn_net::put_le(p + 4, world_size, 4);
  return std::string(reinterpret_cast<const char*>(p), sizeof p);
}

std::string read_hello(const Frame& frame, Hello& hello) {
  if (frame.type() != Frame::HELLO || frame.payload().size() != 8)
    return std::string("its first frame is not a hello of 8 bytes (a ") + type_name(frame.type()) +
           " frame of " + std::to_string(frame.payload().size()) + " bytes)";
  const auto* p = reinterpret_cast<const unsigned char*>(frame.payload().data());
  hello = {static_cast<std::uint32_t>(dtnn_net::get_le(p, 4)),
           static_cast<std::uint32_t>(dtnn_net::get_le(p + 4, 4))};
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
