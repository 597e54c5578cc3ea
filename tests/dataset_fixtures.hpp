// Small dataset files the datasets' own tests write: CIFAR-10 binaries (and their tar archive), and
// class folders of JPEG and PNG images (written with libjpeg and dtnn::testing::write_png). The
// conformance of the dataset plugins writes its files itself (dtnn/testing/dataset_fixtures.hpp).
#pragma once
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "dtnn/testing/dataset_fixtures.hpp"
#include "test_support.hpp"

namespace dtnn::test {

namespace fs = std::filesystem;

// An h x w image whose left half is colour a and right half colour b.
inline std::vector<std::uint8_t> two_colours(int h, int w, std::array<int, 3> a,
                                             std::array<int, 3> b) {
  std::vector<std::uint8_t> px(static_cast<std::size_t>(h * w * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[static_cast<std::size_t>((y * w + x) * 3 + c)] =
            static_cast<std::uint8_t>(x < w / 2 ? a[c] : b[c]);
  return px;
}

inline void write_jpeg(const fs::path& file, int h, int w, const std::vector<std::uint8_t>& px) {
  jpeg_compress_struct info{};
  jpeg_error_mgr err{};
  info.err = jpeg_std_error(&err);
  jpeg_create_compress(&info);
  FILE* f = std::fopen(file.c_str(), "wb");
  REQUIRE(f);
  jpeg_stdio_dest(&info, f);
  info.image_width = static_cast<JDIMENSION>(w);
  info.image_height = static_cast<JDIMENSION>(h);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, 95, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row =
        const_cast<JSAMPROW>(px.data() + static_cast<std::size_t>(info.next_scanline) * w * 3);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  std::fclose(f);
  jpeg_destroy_compress(&info);
}

inline void write_png(const fs::path& file, int h, int w, const std::vector<std::uint8_t>& px) {
  testing::write_png(file, h, w, px);
}

// train/{blue,red}/ and val/{blue,red}/: red images are red on the left, blue ones blue on the
// left (the other half grey); sizes vary; one PNG per class.
inline fs::path make_folder(const std::string& name, int per_class) {
  const fs::path root = temp_dir(name);
  const std::array<int, 3> red{230, 20, 20}, blue{20, 20, 230}, grey{128, 128, 128};
  for (const char* split : {"train", "val"})
    for (const char* cls : {"blue", "red"}) {
      const fs::path dir = root / split / cls;
      fs::create_directories(dir);
      const auto& colour = std::string(cls) == "red" ? red : blue;
      const int count = std::string(split) == "train" ? per_class : 2;
      for (int i = 0; i < count; ++i) {
        const int h = 24 + 4 * (i % 3), w = 32 + 8 * (i % 2);
        const auto px = two_colours(h, w, colour, grey);
        if (i == 0)
          write_png(dir / ("img" + std::to_string(i) + ".png"), h, w, px);
        else
          write_jpeg(dir / ("img" + std::to_string(i) + ".jpg"), h, w, px);
      }
    }
  return root;
}

// NIH ChestX-ray14's layout, small: images/<sub>/NNN.png (16x16), Data_Entry_2017_v2020.csv
// labelling each with "Mass" (bright top half), "Effusion" (bright bottom half), both, or "No
// Finding" (dark), and the two lists (images 12-15 of every 16 are test images) when `lists`.
inline fs::path make_labelled_images(const std::string& name, int count, bool lists) {
  const fs::path root = temp_dir(name);
  fs::create_directories(root / "images" / "a");
  fs::create_directories(root / "images" / "b");
  std::ofstream csv(root / "Data_Entry_2017_v2020.csv");
  csv << "Image Index,Finding Labels,Follow-up #\n";
  std::ofstream train, test;
  if (lists) {
    train.open(root / "train_val_list.txt");
    test.open(root / "test_list.txt");
  }
  const char* kLabels[4] = {"No Finding", "Mass", "Effusion", "Effusion|Mass"};
  for (int i = 0; i < count; ++i) {
    const int kind = i % 4;
    const std::string file = std::to_string(100 + i) + ".png";
    std::vector<std::uint8_t> px(16 * 16 * 3);
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) {
        const bool bright = (y < 8 && (kind & 1)) || (y >= 8 && (kind & 2));
        const int v = (bright ? 200 : 30) + (i * 7 + x) % 20;
        for (int c = 0; c < 3; ++c)
          px[static_cast<std::size_t>((y * 16 + x) * 3 + c)] = std::uint8_t(v);
      }
    write_png(root / "images" / (i % 2 ? "a" : "b") / file, 16, 16, px);
    csv << file << ",\"" << kLabels[kind] << "\"," << i << "\n";
    if (lists) ((i / 4) % 4 == 3 ? test : train) << file << "\n";
  }
  return root;
}

// CIFAR-10 binary records: record r of a file gets label (r + seed) % 10 and pixel (c, p) =
// (r * 7 + c * 50 + p + seed) % 256.
inline std::vector<std::uint8_t> cifar_records(int count, int seed) {
  std::vector<std::uint8_t> b;
  for (int r = 0; r < count; ++r) {
    b.push_back(static_cast<std::uint8_t>((r + seed) % 10));
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 1024; ++p)
        b.push_back(static_cast<std::uint8_t>((r * 7 + c * 50 + p + seed) % 256));
  }
  return b;
}

// The six files of a small CIFAR-10: five training files of 3 records, a test file of 2.
inline std::map<std::string, std::vector<std::uint8_t>> cifar_files() {
  std::map<std::string, std::vector<std::uint8_t>> files;
  for (int i = 1; i <= 5; ++i)
    files["data_batch_" + std::to_string(i) + ".bin"] = cifar_records(3, i);
  files["test_batch.bin"] = cifar_records(2, 9);
  return files;
}

// A small CIFAR-100: train.bin of 6 records, test.bin of 2. Record r: coarse class (r + seed) % 20,
// fine class (r * 13 + seed) % 100, pixels as cifar_records'.
inline std::vector<std::uint8_t> cifar100_records(int count, int seed) {
  std::vector<std::uint8_t> b;
  for (int r = 0; r < count; ++r) {
    b.push_back(static_cast<std::uint8_t>((r + seed) % 20));
    b.push_back(static_cast<std::uint8_t>((r * 13 + seed) % 100));
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 1024; ++p)
        b.push_back(static_cast<std::uint8_t>((r * 7 + c * 50 + p + seed) % 256));
  }
  return b;
}
inline std::map<std::string, std::vector<std::uint8_t>> cifar100_files() {
  return {{"train.bin", cifar100_records(6, 90)}, {"test.bin", cifar100_records(2, 3)}};
}

// A ustar archive of files under prefix/.
inline std::vector<std::uint8_t> tar(const std::map<std::string, std::vector<std::uint8_t>>& files,
                                     const std::string& prefix) {
  std::vector<std::uint8_t> out;
  for (const auto& [name, bytes] : files) {
    std::array<char, 512> h{};
    std::snprintf(h.data(), 100, "%s/%s", prefix.c_str(), name.c_str());
    std::snprintf(h.data() + 100, 8, "%07o", 0644);
    std::snprintf(h.data() + 108, 8, "%07o", 0);
    std::snprintf(h.data() + 116, 8, "%07o", 0);
    std::snprintf(h.data() + 124, 12, "%011o", static_cast<unsigned>(bytes.size()));
    std::snprintf(h.data() + 136, 12, "%011o", 0);
    h[156] = '0';
    std::memcpy(h.data() + 257, "ustar", 6);
    std::memcpy(h.data() + 263, "00", 2);
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (char ch : h) sum += static_cast<unsigned char>(ch);
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    out.insert(out.end(), h.begin(), h.end());
    out.insert(out.end(), bytes.begin(), bytes.end());
    out.resize((out.size() + 511) / 512 * 512, 0);
  }
  out.resize(out.size() + 1024, 0);
  return out;
}

}  // namespace dtnn::test
