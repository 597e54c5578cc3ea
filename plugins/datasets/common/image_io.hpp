// Image files to RGB pixels: JPEG through libjpeg-turbo (decoded at a reduced scale when the
// image is much larger than needed), PNG through libpng; the format is told by the file's first
// bytes. Then the shorter side resized (bilinear) and the centre cropped.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

namespace dtnn::datasets {

struct RgbImage {
  std::int64_t height = 0, width = 0;
  std::vector<std::uint8_t> pixels;  // [height][width][3]
};

// Decodes file; min_side: the shortest side the caller needs (JPEG may decode smaller than the
// file, down to that). Errors name the file.
RgbImage decode_image(const std::filesystem::path& file, std::int64_t min_side);

// out[size][size][3] = the centre size x size of the image scaled so that its shorter side is
// `resize` (bilinear).
void resize_and_crop(const RgbImage& image, std::int64_t resize, std::int64_t size, float* out);

}  // namespace dtnn::datasets
