// MNIST-format IDX files (raw or gzip'd) through the mnist dataset plugin. The input's first byte
// picks which of the four files it becomes; the other three are valid, of 2 samples.
#include "dtnn/dataset.hpp"
#include "fuzz_support.hpp"

namespace {

std::string idx(std::uint32_t magic, std::initializer_list<std::uint32_t> dims, std::size_t bytes) {
  std::string s;
  auto be = [&](std::uint32_t v) {
    for (int i = 3; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  be(magic);
  for (auto d : dims) be(d);
  return s + std::string(bytes, '\1');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  if (size == 0) return 0;
  static const char* kNames[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  const auto dir = fuzz::scratch() / "mnist";
  for (int i = 0; i < 4; ++i)
    fuzz::write(dir / kNames[i],
                i % 2 == 0 ? idx(0x803, {2, 28, 28}, 2 * 28 * 28) : idx(0x801, {2}, 2));
  fuzz::write(dir / kNames[data[0] % 4], fuzz::text(data + 1, size - 1));
  fuzz::expect_clear_errors([&] {
    fuzz::plugins().create_as<Dataset>("dataset", "mnist",
                                       Params(nlohmann::json{{"path", dir.string()}}, "dataset"));
  });
  return 0;
}
