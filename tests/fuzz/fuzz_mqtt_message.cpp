// The mqtt communicator's message parsers (plugins/communicators/mqtt/message.hpp), as a rank
// meets what arrives on a run's topics: a header and its bytes, then the payload its type carries.
// Any bytes give a message whose bytes lie within its transfer and which encodes back to the same
// bytes, or a dtnn::Error.
#include <cstdlib>
#include <span>
#include <vector>

#include "fuzz_support.hpp"
#include "message.hpp"

using namespace dtnn_mqtt;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> payload(data, size);
  dtnn::fuzz::expect_clear_errors([&] {
    const Message m = decode_message(payload);
    const Header& h = m.header;
    if (h.offset > h.total || m.bytes.size() > h.total - h.offset) std::abort();
    if (encode_message(h, m.bytes.data(), m.bytes.size()) !=
        std::vector<unsigned char>(payload.begin(), payload.end()))
      std::abort();  // a message decodes to what encodes back to its bytes
    switch (h.type) {
      case MessageType::session:
      case MessageType::hello: {
        const Hello hello = decode_hello(m.bytes);
        if (encode_hello(hello.world_size, hello.nonce) !=
            std::vector<unsigned char>(m.bytes.begin(), m.bytes.end()))
          std::abort();
        break;
      }
      case MessageType::welcome:
      case MessageType::refusal:
      case MessageType::gone: {
        const Answer a = decode_answer(m.bytes);
        if (encode_answer(a.nonce, a.reason) !=
            std::vector<unsigned char>(m.bytes.begin(), m.bytes.end()))
          std::abort();
        break;
      }
      case MessageType::data:
        break;
    }
  });
  return 0;
}
