// PyDTNN weight files (.npz of the layers' arrays) loaded into the tiny model.
#include "dtnn/pydtnn_weights.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  const auto file = fuzz::scratch() / "weights.npz";
  fuzz::write(file, fuzz::text(data, size));
  fuzz::expect_clear_errors([&] { load_pydtnn_weights(fuzz::tiny_model(), file); });
  return 0;
}
