// JPEG and PNG decoding and the resize-and-crop of the image-folder datasets (image_io.cpp).
#include "fuzz_support.hpp"
#include "image_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  const auto file = fuzz::scratch() / "image";
  fuzz::write(file, fuzz::text(data, size));
  fuzz::expect_clear_errors([&] {
    const datasets::RgbImage image = datasets::decode_image(file, 16);
    std::vector<float> out(16 * 16 * 3);
    datasets::resize_and_crop(image, 18, 16, out.data());
  });
  return 0;
}
