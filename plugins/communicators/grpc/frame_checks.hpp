// What the grpc communicator accepts of a peer's frames (star.proto): a hello's rank and world size
// (8 bytes, little-endian), and a collective's data frame (its type, number and length must be the
// collective's). Separate from the streams so that tests/fuzz/fuzz_grpc_frame.cpp can fuzz them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "star.pb.h"

namespace dtnn_grpc {

struct Hello {
  std::uint32_t rank = 0, world = 0;
};

// A hello's payload for rank of world_size.
std::string hello_payload(std::uint32_t rank, std::uint32_t world_size);
// The hello a frame carries, or "" and hello set; else why it is not one.
std::string read_hello(const Frame& frame, Hello& hello);
// Throws a dtnn::Error naming `peer` unless frame is the data of collective seq, `bytes` long.
void expect_data(const Frame& frame, std::uint64_t seq, std::size_t bytes, const std::string& peer);

}  // namespace dtnn_grpc
