// dtnn's int8 models (decode_int8_model, `dtnn quantize`'s files) into the tiny model, whose fc
// is its one int8 product.
#include "dtnn/int8_model.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  fuzz::expect_clear_errors(
      [&] { decode_int8_model(fuzz::text(data, size), "fuzz.int8", fuzz::tiny_model()); });
  return 0;
}
