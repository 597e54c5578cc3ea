// CIFAR-10 binaries through the cifar10 dataset plugin: the input is the archive read in place
// (tar, gzip'd or not) when its first byte is even, else test_batch.bin beside valid batches.
#include "dtnn/dataset.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  if (size == 0) return 0;
  const std::string input = fuzz::text(data + 1, size - 1);
  std::filesystem::path path;
  if (data[0] % 2 == 0) {
    path = fuzz::scratch() / "cifar-10-binary.tar.gz";
    fuzz::write(path, input);
  } else {
    path = fuzz::scratch() / "cifar";
    const std::string record(1 + 3072, '\1');  // label 1, then the pixels
    for (int b = 1; b <= 5; ++b)
      fuzz::write(path / ("data_batch_" + std::to_string(b) + ".bin"), record);
    fuzz::write(path / "test_batch.bin", input);
  }
  fuzz::expect_clear_errors([&] {
    fuzz::plugins().create_as<Dataset>("dataset", "cifar10",
                                       Params(nlohmann::json{{"path", path.string()}}, "dataset"));
  });
  return 0;
}
