#include "image_io.hpp"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE first
#include <jpeglib.h>
// clang-format on
#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>

#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"

namespace dtnn::datasets {

namespace {

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& file) {
  const std::string bytes = read_file(file);
  return {bytes.begin(), bytes.end()};
}

// Decoded images may hold at most 2^28 pixels (16384 x 16384): a header claiming more is refused
// before anything is allocated for it.
constexpr std::int64_t kMaxPixels = std::int64_t{1} << 28;
void check_dimensions(std::int64_t width, std::int64_t height, const std::filesystem::path& file) {
  if (width < 1 || height < 1 || width * height > kMaxPixels)
    throw Error(file.string() + ": a " + std::to_string(width) + " x " + std::to_string(height) +
                " image: expected at least 1 and at most 2^28 pixels (16384 x 16384)");
}

// libjpeg reports errors through error_exit, which must not return: jump back to decode_jpeg.
struct JpegError {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};
void jpeg_error_exit(j_common_ptr info) {
  auto* e = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, e->message);
  std::longjmp(e->jump, 1);
}

RgbImage decode_jpeg(const std::vector<std::uint8_t>& bytes, const std::filesystem::path& file,
                     std::int64_t min_side) {
  jpeg_decompress_struct info{};
  JpegError error{};
  info.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = jpeg_error_exit;
  RgbImage image;
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&info);
    throw Error(file.string() + ": bad JPEG (" + error.message + ")");
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  info.out_color_space = JCS_RGB;
  // The largest reduction (1/2, 1/4, 1/8) that keeps the shorter side at least min_side.
  const std::int64_t shorter = std::min<std::int64_t>(info.image_width, info.image_height);
  info.scale_num = 1;
  info.scale_denom = 1;
  for (unsigned d : {8u, 4u, 2u})
    if (shorter / d >= min_side) {
      info.scale_denom = d;
      break;
    }
  try {
    check_dimensions(info.image_width, info.image_height, file);
  } catch (const Error&) {
    jpeg_destroy_decompress(&info);
    throw;
  }
  jpeg_start_decompress(&info);
  image.width = info.output_width;
  image.height = info.output_height;
  image.pixels.resize(static_cast<std::size_t>(image.width * image.height * 3));
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = image.pixels.data() + static_cast<std::size_t>(info.output_scanline) *
                                             static_cast<std::size_t>(image.width) * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return image;
}

RgbImage decode_png(const std::vector<std::uint8_t>& bytes, const std::filesystem::path& file) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()))
    throw Error(file.string() + ": bad PNG (" + png.message + ")");
  png.format = PNG_FORMAT_RGB;
  try {
    check_dimensions(png.width, png.height, file);
  } catch (const Error&) {
    png_image_free(&png);
    throw;
  }
  RgbImage image;
  image.width = png.width;
  image.height = png.height;
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    const std::string why = png.message;
    png_image_free(&png);
    throw Error(file.string() + ": bad PNG (" + why + ")");
  }
  return image;
}

}  // namespace

RgbImage decode_image(const std::filesystem::path& file, std::int64_t min_side) {
  const std::vector<std::uint8_t> bytes = read_bytes(file);
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF)
    return decode_jpeg(bytes, file, min_side);
  if (bytes.size() >= 8 && bytes[0] == 0x89 && bytes[1] == 'P' && bytes[2] == 'N' &&
      bytes[3] == 'G')
    return decode_png(bytes, file);
  throw Error(file.string() + ": neither a JPEG nor a PNG file (by its first bytes)");
}

void resize_and_crop(const RgbImage& image, std::int64_t resize, std::int64_t size, float* out) {
  const double scale = double(resize) / double(std::min(image.height, image.width));
  const double scaled_h = image.height * scale, scaled_w = image.width * scale;
  const double top = (scaled_h - double(size)) / 2, left = (scaled_w - double(size)) / 2;
  for (std::int64_t y = 0; y < size; ++y) {
    // The source position of the output pixel's centre.
    const double sy = std::clamp((y + top + 0.5) / scale - 0.5, 0.0, double(image.height - 1));
    const auto y0 = static_cast<std::int64_t>(sy);
    const std::int64_t y1 = std::min(y0 + 1, image.height - 1);
    const double fy = sy - double(y0);
    for (std::int64_t x = 0; x < size; ++x) {
      const double sx = std::clamp((x + left + 0.5) / scale - 0.5, 0.0, double(image.width - 1));
      const auto x0 = static_cast<std::int64_t>(sx);
      const std::int64_t x1 = std::min(x0 + 1, image.width - 1);
      const double fx = sx - double(x0);
      for (int c = 0; c < 3; ++c) {
        auto at = [&](std::int64_t yy, std::int64_t xx) {
          return double(image.pixels[static_cast<std::size_t>((yy * image.width + xx) * 3 + c)]);
        };
        const double v = (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
                         fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
        out[(y * size + x) * 3 + c] = static_cast<float>(v);
      }
    }
  }
}

}  // namespace dtnn::datasets
