// cifar10: the binary version of CIFAR-10 (https://www.cs.toronto.edu/~kriz/cifar.html), from a
// folder or straight from its archive:
//   <path>/data_batch_1.bin .. data_batch_5.bin, <path>/test_batch.bin
//       (or the same under <path>/cifar-10-batches-bin/, as the archive unpacks)
//   <path> = cifar-10-binary.tar.gz: read in place, never unpacked to disk
// A record is 1 label byte (0..9) then 3072 pixel bytes: the 32x32 red plane, then green, then
// blue, each row-major. Pixels are scaled to [0, 1], then (standardize: true, the default)
// standardised per channel with the mean and standard deviation of the training split.
// Every file is checked whole at start-up: a bad one is refused with its name, the byte offset
// and what was expected.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dtnn/dataset.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "one_hot.hpp"
#include "read_file.hpp"

namespace {

using namespace dtnn;
namespace fs = std::filesystem;

constexpr std::int64_t kSide = 32, kPixels = kSide * kSide, kRecord = 1 + 3 * kPixels;
const std::array<std::string, 5> kTrainFiles = {"data_batch_1.bin", "data_batch_2.bin",
                                                "data_batch_3.bin", "data_batch_4.bin",
                                                "data_batch_5.bin"};
const std::string kTestFile = "test_batch.bin";

bool is_archive(const fs::path& p) {
  const std::string s = p.filename().string();
  return s.ends_with(".tar.gz") || s.ends_with(".tgz") || s.ends_with(".tar");
}

// The regular files of a tar archive (gzip'd or not), by base name: {name: contents}.
std::map<std::string, std::vector<std::uint8_t>> untar(const fs::path& archive) {
  const std::vector<std::uint8_t> bytes = datasets::read_file(archive);
  std::map<std::string, std::vector<std::uint8_t>> files;
  std::size_t at = 0;
  while (at + 512 <= bytes.size()) {
    const std::uint8_t* h = bytes.data() + at;
    if (std::all_of(h, h + 512, [](std::uint8_t b) { return b == 0; })) break;  // end of archive
    // The checksum: the header's bytes summed with its own 8-byte field taken as spaces.
    unsigned sum = 0;
    for (int i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : h[i];
    auto octal = [&](int offset, int width) {
      std::uint64_t v = 0;
      for (int i = offset; i < offset + width && h[i] >= '0' && h[i] <= '7'; ++i)
        v = v * 8 + (h[i] - '0');
      return v;
    };
    int first = 148;
    while (first < 156 && h[first] == ' ') ++first;
    if (octal(first, 156 - first) != sum)
      throw Error(archive.string() +
                  ": not a tar archive, or corrupt: bad header checksum at byte " +
                  std::to_string(at) + " (of the decompressed archive)");
    const std::string name(reinterpret_cast<const char*>(h),
                           strnlen(reinterpret_cast<const char*>(h), 100));
    const std::uint64_t size = octal(124, 12);
    const char type = static_cast<char>(h[156]);
    at += 512;
    if (at + size > bytes.size())
      throw Error(archive.string() + ": truncated: member '" + name + "' needs " +
                  std::to_string(size) + " bytes from byte " + std::to_string(at) +
                  ", the archive " + "holds " + std::to_string(bytes.size() - at));
    if (type == '0' || type == '\0')
      files[fs::path(name).filename().string()].assign(
          bytes.begin() + static_cast<std::ptrdiff_t>(at),
          bytes.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += (size + 511) / 512 * 512;
  }
  return files;
}

class Cifar10 final : public Dataset {
 public:
  explicit Cifar10(const Params& p) : standardize_(p.get_bool("standardize")) {
    const fs::path path = p.get_string("path");
    std::error_code ec;
    if (path.empty())
      p.fail("path",
             "the folder of the CIFAR-10 binary files or the cifar-10-binary.tar.gz archive");
    if (fs::is_regular_file(path, ec) && is_archive(path)) {
      auto files = untar(path);
      auto take = [&](const std::string& name) {
        auto it = files.find(name);
        if (it == files.end()) throw Error(path.string() + ": the archive holds no " + name);
        return std::pair{path.string() + ":" + name, std::move(it->second)};
      };
      for (const auto& f : kTrainFiles) add(split_[0], take(f));
      add(split_[1], take(kTestFile));
    } else if (fs::is_directory(path, ec)) {
      fs::path folder = path;
      if (!fs::exists(folder / kTestFile) &&
          fs::exists(folder / "cifar-10-batches-bin" / kTestFile))
        folder /= "cifar-10-batches-bin";
      for (const auto& f : kTrainFiles) add(split_[0], load(folder / f));
      add(split_[1], load(folder / kTestFile));
    } else {
      throw Error(p.key_path("path") + ": '" + path.string() +
                  "' is neither a folder nor a .tar.gz archive");
    }
    compute_normalisation();
  }

  Shape sample_shape(Layout layout) const override {
    return layout == Layout::nhwc ? Shape{kSide, kSide, 3} : Shape{3, kSide, kSide};
  }
  std::int64_t num_classes() const override { return 10; }
  std::int64_t size(Split s) const override { return split_[static_cast<int>(s)].count; }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const Part& part = split_[static_cast<int>(s)];
      const bool nhwc = x.layout() == Layout::nhwc;
      T* xp = x.data<T>();
      parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
        const std::int64_t id = indices[static_cast<std::size_t>(i)];
        const std::uint8_t* planes = part.pixels.data() + id * 3 * kPixels;
        T* dst = xp + i * 3 * kPixels;
        for (int c = 0; c < 3; ++c) {
          const T scale = static_cast<T>(scale_[c]), offset = static_cast<T>(offset_[c]);
          for (std::int64_t p = 0; p < kPixels; ++p)
            dst[nhwc ? p * 3 + c : c * kPixels + p] = T(planes[c * kPixels + p]) * scale + offset;
        }
        datasets::write_one_hot<T>(y, i, part.labels[static_cast<std::size_t>(id)]);
      });
    });
  }

 private:
  struct Part {
    std::vector<std::uint8_t> pixels, labels;  // [count][3][32*32], [count]
    std::int64_t count = 0;
  };

  static std::pair<std::string, std::vector<std::uint8_t>> load(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      throw Error(file.string() + ": missing (CIFAR-10 binary version expected: " +
                  "data_batch_1..5.bin and test_batch.bin)");
    return {file.string(), datasets::read_file(file)};
  }

  static void add(Part& part, const std::pair<std::string, std::vector<std::uint8_t>>& file) {
    const auto& [name, bytes] = file;
    const auto size = static_cast<std::int64_t>(bytes.size());
    if (size == 0 || size % kRecord != 0)
      throw Error(name + ": truncated at byte " + std::to_string(size / kRecord * kRecord) +
                  ": records are " + std::to_string(kRecord) + " bytes (a label, then 3x32x32 " +
                  "pixels); the file holds " + std::to_string(size) + " bytes");
    for (std::int64_t r = 0; r < size / kRecord; ++r) {
      const std::uint8_t label = bytes[static_cast<std::size_t>(r * kRecord)];
      if (label > 9)
        throw Error(name + ": label " + std::to_string(label) + " at byte " +
                    std::to_string(r * kRecord) + ": expected a class in 0..9");
      part.labels.push_back(label);
      part.pixels.insert(part.pixels.end(), bytes.begin() + r * kRecord + 1,
                         bytes.begin() + (r + 1) * kRecord);
    }
    part.count += size / kRecord;
  }

  // x = pixel * scale + offset per channel: pixel / 255, then standardised with the training
  // split's mean and standard deviation of each channel.
  void compute_normalisation() {
    for (int c = 0; c < 3; ++c) {
      scale_[c] = 1.0 / 255.0;
      offset_[c] = 0.0;
    }
    if (!standardize_) return;
    const Part& train = split_[0];
    for (int c = 0; c < 3; ++c) {
      double sum = 0, sum2 = 0;
      for (std::int64_t i = 0; i < train.count; ++i)
        for (std::int64_t p = 0; p < kPixels; ++p) {
          const double v =
              train.pixels[static_cast<std::size_t>((i * 3 + c) * kPixels + p)] / 255.0;
          sum += v;
          sum2 += v * v;
        }
      const double n = double(train.count * kPixels), mean = sum / n;
      const double std = std::sqrt(std::max(sum2 / n - mean * mean, 1e-12));
      scale_[c] = 1.0 / (255.0 * std);
      offset_[c] = -mean / std;
    }
  }

  bool standardize_;
  Part split_[2];
  double scale_[3] = {}, offset_[3] = {};
};

Plugin* create(const Params& p, const PluginContext&) { return new Cifar10(p); }

}  // namespace

// It reads files: its conformance cases come from whoever has them (tests/test_conformance.cpp).
DTNN_EXPORT_PLUGIN(
        .kind = "dataset", .name = "cifar10",
        .description =
            "CIFAR-10 binary version (data_batch_1..5.bin, test_batch.bin, or the .tar.gz read in "
            "place), 32x32x3, 10 classes, standardised per channel",
        .parameters = R"({"path": "", "standardize": true})", .traits = R"({"conformance": []})",
        .factory = create)
