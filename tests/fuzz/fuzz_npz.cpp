// .npz archives and the .npy arrays in them (read_npz): zip directory, deflate, npy headers.
#include "dtnn/npz.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dtnn::fuzz::expect_clear_errors(
      [&] { dtnn::read_npz_bytes(dtnn::fuzz::text(data, size), "fuzz.npz"); });
  return 0;
}
