// The tcp communicator's frame parsers (plugins/communicators/tcp/frame.hpp), as rank 0 meets what
// a peer sends: a header, checked against what the collective expects, then a hello. Any bytes give
// a frame of the expected type, number and length, or a dtnn::Error.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <span>

#include "frame.hpp"
#include "fuzz_support.hpp"

using namespace dtnn_tcp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeaderBytes) return 0;
  const std::span<const unsigned char, kHeaderBytes> head(data, kHeaderBytes);
  const std::span<const unsigned char> rest(data + kHeaderBytes, size - kHeaderBytes);
  dtnn::fuzz::expect_clear_errors([&] {
    const FrameHeader h = decode_header(head);
    std::array<unsigned char, kHeaderBytes> bytes{};
    std::copy(head.begin(), head.end(), bytes.begin());
    if (encode_header(h) != bytes)
      std::abort();  // a header decodes to what encodes back to its bytes
    if (h.type == FrameType::hello) {
      expect_frame(h, FrameType::hello, 0, kMaxControlBytes, false);
      if (h.length > kMaxControlBytes) std::abort();
      const Hello hello = decode_hello(rest.first(std::min<std::size_t>(rest.size(), h.length)));
      if (encode_hello(hello) != std::vector<unsigned char>(rest.begin(), rest.begin() + 8))
        std::abort();
    } else {
      expect_frame(h, FrameType::data, 3, 4096, true);
      if (h.type != FrameType::data || h.seq != 3 || h.length != 4096) std::abort();
    }
  });
  return 0;
}
