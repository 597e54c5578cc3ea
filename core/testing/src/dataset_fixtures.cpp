#include "dtnn/testing/dataset_fixtures.hpp"

#include <zlib.h>

#include <array>
#include <fstream>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/npz.hpp"

namespace dtnn::testing {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void write_bytes(const fs::path& file, const std::vector<unsigned char>& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// The fixture's integer `key`, or `otherwise`.
std::int64_t number(const json& fixture, const char* key, std::int64_t otherwise) {
  const auto it = fixture.find(key);
  if (it == fixture.end()) return otherwise;
  if (!it->is_number_integer())
    throw Error("fixture: " + std::string(key) + ": expected an integer");
  return it->get<std::int64_t>();
}

std::vector<std::string> names(const json& fixture, const char* key,
                               std::vector<std::string> otherwise) {
  const auto it = fixture.find(key);
  if (it == fixture.end()) return otherwise;
  if (!it->is_array()) throw Error("fixture: " + std::string(key) + ": expected a list of names");
  return it->get<std::vector<std::string>>();
}

// An image of two halves: colour a on the left, b on the right.
std::vector<unsigned char> halves(int h, int w, std::array<int, 3> a, std::array<int, 3> b) {
  std::vector<unsigned char> px(static_cast<std::size_t>(h * w * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[static_cast<std::size_t>((y * w + x) * 3 + c)] =
            static_cast<unsigned char>(x < w / 2 ? a[c] : b[c]);
  return px;
}

void write_files(const json& files, const fs::path& dir) {
  if (!files.is_object()) throw Error("fixture: files: expected {\"name\": content, ...}");
  for (const auto& [name, content] : files.items()) {
    const fs::path file = dir / name;
    if (content.is_string()) {
      const std::string text = content.get<std::string>();
      write_bytes(file, std::vector<unsigned char>(text.begin(), text.end()));
    } else if (content.contains("bytes")) {
      write_bytes(file, content["bytes"].get<std::vector<unsigned char>>());
    } else if (content.contains("png")) {
      const json& p = content["png"];
      const int h = p.at(0).get<int>(), w = p.at(1).get<int>();
      const auto rgb = p.at(2).get<std::array<int, 3>>();
      fs::create_directories(file.parent_path());
      write_png(file, h, w, halves(h, w, rgb, rgb));
    } else {
      throw Error("fixture: files: " + name +
                  ": expected text, {\"bytes\": [...]} or {\"png\": "
                  "[height, width, [r, g, b]]}");
    }
  }
}

// Record r of a file: its label bytes (r + seed) % classes, then pixel p = (r * 7 + p + seed).
void write_cifar_binary(const json& fixture, const fs::path& dir) {
  const std::int64_t records = number(fixture, "records", 2),
                     label_bytes = number(fixture, "label_bytes", 1),
                     classes = number(fixture, "classes", 10),
                     pixels = number(fixture, "pixels", 0);
  if (pixels < 1 || classes < 1) throw Error("fixture: cifar_binary: give pixels and classes");
  auto file = [&](int seed) {
    std::vector<unsigned char> b;
    for (std::int64_t r = 0; r < records; ++r) {
      for (std::int64_t l = 0; l < label_bytes; ++l)
        b.push_back(static_cast<unsigned char>((r + seed + l) % classes));
      for (std::int64_t p = 0; p < pixels; ++p)
        b.push_back(static_cast<unsigned char>((r * 7 + p + seed) % 256));
    }
    return b;
  };
  int seed = 1;
  for (const std::string& name : names(fixture, "train", {})) write_bytes(dir / name, file(seed++));
  write_bytes(dir / fixture.at("test").get<std::string>(), file(9));
}

void write_npz_fixture(const json& fixture, const fs::path& dir) {
  const std::vector<std::int64_t> sample = fixture.at("sample").get<std::vector<std::int64_t>>();
  auto floats = [&](std::int64_t n, double scale) {
    NpyArray a;
    a.shape = {n};
    a.shape.insert(a.shape.end(), sample.begin(), sample.end());
    a.data.resize(static_cast<std::size_t>(a.numel()) * 4);
    auto* v = reinterpret_cast<float*>(a.data.data());
    for (std::int64_t i = 0; i < a.numel(); ++i) v[i] = float(scale * double(i % 7));
    return a;
  };
  auto labels = [](std::int64_t n) {
    NpyArray a;
    a.shape = {n};
    a.data.resize(static_cast<std::size_t>(n) * 4);
    for (std::int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(a.data.data())[i] = float(i % 3);
    return a;
  };
  write_npz(dir / fixture.value("file", std::string("d.npz")), {{"x_train", floats(5, 0.1)},
                                                                {"y_train", labels(5)},
                                                                {"x_test", floats(3, 0.2)},
                                                                {"y_test", labels(3)}});
}

// <split>/<class>/img<i>.png: class c's images have its colour on the left, grey on the right.
void write_image_classes(const json& fixture, const fs::path& dir) {
  const std::int64_t per_class = number(fixture, "per_class", 3);
  const std::vector<std::string> classes = names(fixture, "classes", {"blue", "red"});
  for (const std::string& split : names(fixture, "splits", {"train", "val"}))
    for (std::size_t c = 0; c < classes.size(); ++c)
      for (std::int64_t i = 0; i < per_class; ++i) {
        const int h = 24 + 4 * int(i % 3), w = 32 + 8 * int(i % 2);
        const std::array<int, 3> colour{int(40 + 50 * c) % 256, 20, int(230 - 50 * c) % 256};
        const fs::path file = dir / split / classes[c] / ("img" + std::to_string(i) + ".png");
        fs::create_directories(file.parent_path());
        write_png(file, h, w, halves(h, w, colour, {128, 128, 128}));
      }
}

// images/{a,b}/NNN.png labelled "No Finding", "Mass", "Effusion" or both by a CSV; every fourth
// group of four a test image.
void write_labelled_images(const json& fixture, const fs::path& dir) {
  const std::int64_t count = number(fixture, "count", 8);
  std::string csv = "Image Index,Finding Labels,Follow-up #\n", train, test;
  const char* kLabels[4] = {"No Finding", "Mass", "Effusion", "Effusion|Mass"};
  for (std::int64_t i = 0; i < count; ++i) {
    const int kind = int(i % 4);
    const std::string name = std::to_string(100 + i) + ".png";
    std::vector<unsigned char> px(16 * 16 * 3);
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) {
        const bool bright = (y < 8 && (kind & 1)) || (y >= 8 && (kind & 2));
        for (int c = 0; c < 3; ++c)
          px[static_cast<std::size_t>((y * 16 + x) * 3 + c)] =
              static_cast<unsigned char>((bright ? 200 : 30) + (i * 7 + x) % 20);
      }
    const fs::path file = dir / "images" / (i % 2 ? "a" : "b") / name;
    fs::create_directories(file.parent_path());
    write_png(file, 16, 16, px);
    csv += name + ",\"" + kLabels[kind] + "\"," + std::to_string(i) + "\n";
    ((i / 4) % 4 == 3 ? test : train) += name + "\n";
  }
  write_files(
      {{"Data_Entry_2017_v2020.csv", csv}, {"train_val_list.txt", train}, {"test_list.txt", test}},
      dir);
}

// Every "$dir" in the strings of value, replaced by folder.
json with_folder(json value, const std::string& folder) {
  if (value.is_string()) {
    std::string s = value.get<std::string>();
    for (std::size_t at = s.find("$dir"); at != std::string::npos; at = s.find("$dir", at))
      s.replace(at, 4, folder), at += folder.size();
    return s;
  }
  if (value.is_structured())
    for (auto& item : value) item = with_folder(item, folder);
  return value;
}

void chunk(std::vector<unsigned char>& png, const char* type,
           const std::vector<unsigned char>& data) {
  const auto n = static_cast<std::uint32_t>(data.size());
  for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<unsigned char>(n >> s));
  std::vector<unsigned char> body(type, type + 4);
  body.insert(body.end(), data.begin(), data.end());
  png.insert(png.end(), body.begin(), body.end());
  const auto crc =
      static_cast<std::uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size())));
  for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<unsigned char>(crc >> s));
}

}  // namespace

void write_png(const fs::path& file, int height, int width, const std::vector<unsigned char>& rgb) {
  std::vector<unsigned char> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<unsigned char> header;
  for (const int v : {width, height})
    for (int s = 24; s >= 0; s -= 8) header.push_back(static_cast<unsigned char>(v >> s));
  header.insert(header.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, no filter, progressive
  chunk(png, "IHDR", header);
  std::vector<unsigned char> rows;  // each row: filter 0, then its pixels
  for (int y = 0; y < height; ++y) {
    rows.push_back(0);
    rows.insert(rows.end(), rgb.begin() + y * width * 3, rgb.begin() + (y + 1) * width * 3);
  }
  uLongf size = compressBound(static_cast<uLong>(rows.size()));
  std::vector<unsigned char> deflated(size);
  if (compress(deflated.data(), &size, rows.data(), static_cast<uLong>(rows.size())) != Z_OK)
    throw Error(file.string() + ": zlib could not compress the image");
  deflated.resize(size);
  chunk(png, "IDAT", deflated);
  chunk(png, "IEND", {});
  write_bytes(file, png);
}

json write_fixture(const json& fixture, const fs::path& folder) {
  if (!fixture.is_object() || !fixture.contains("kind") || !fixture["kind"].is_string())
    throw Error("fixture: expected {\"kind\": ..., \"params\": {...}}, got " + fixture.dump());
  const std::string kind = fixture["kind"].get<std::string>();
  fs::create_directories(folder);
  if (kind == "files")
    write_files(fixture.at("files"), folder);
  else if (kind == "cifar_binary")
    write_cifar_binary(fixture, folder);
  else if (kind == "npz")
    write_npz_fixture(fixture, folder);
  else if (kind == "image_classes")
    write_image_classes(fixture, folder);
  else if (kind == "labelled_images")
    write_labelled_images(fixture, folder);
  else
    throw Error("fixture: unknown kind '" + kind +
                "': expected files, cifar_binary, npz, image_classes or labelled_images");
  const json params = with_folder(fixture.value("params", json::object()), folder.string());
  json cases = json::array();
  for (const json& p : params.is_array() ? params : json::array({params}))
    cases.push_back({{"params", p}});
  return cases;
}

}  // namespace dtnn::testing
