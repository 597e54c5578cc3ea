// The grpc communicator's frames (plugins/communicators/grpc/frame_checks.hpp), as rank 0 meets
// what a peer sends: protobuf's parse of the bytes, then the hello it must be, or the data frame of
// the collective due. Any bytes give a hello that encodes back to its payload, the frame due, or a
// dtnn::Error.
#include <cstdlib>

#include "frame_checks.hpp"
#include "fuzz_support.hpp"

using namespace dtnn_grpc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Frame frame;
  if (!frame.ParseFromArray(data, static_cast<int>(size))) return 0;
  Hello hello;
  if (read_hello(frame, hello).empty() && hello_payload(hello.rank, hello.world) != frame.payload())
    std::abort();  // a hello decodes to what encodes back to its bytes
  dtnn::fuzz::expect_clear_errors([&] {
    expect_data(frame, 3, 4096, "fuzz");
    if (frame.type() != Frame::DATA || frame.seq() != 3 || frame.payload().size() != 4096)
      std::abort();
  });
  return 0;
}
