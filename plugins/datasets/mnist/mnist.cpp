// mnist: the IDX files of MNIST and of Fashion-MNIST (the same format and names), gzip'd or raw:
//   <path>/train-images-idx3-ubyte[.gz]  <path>/train-labels-idx1-ubyte[.gz]
//   <path>/t10k-images-idx3-ubyte[.gz]   <path>/t10k-labels-idx1-ubyte[.gz]
// IDX: big-endian magic 0x0000 TT DD (TT = 0x08 unsigned byte, DD = number of dimensions), DD
// big-endian uint32 sizes, then the data. Pixels are scaled to [0, 1]; samples are 28x28x1.
// Every file is checked whole at start-up: a bad one is refused with its name, the byte offset
// and what was expected.
#include <algorithm>
#include <cstdint>
#include <filesystem>
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

struct IdxFile {
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> data;
};

std::string hex(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

IdxFile read_idx(const fs::path& file, std::uint32_t expected_dims) {
  std::vector<std::uint8_t> bytes = datasets::read_file(file);
  auto be32 = [&](std::size_t at) {
    return (std::uint32_t(bytes[at]) << 24) | (std::uint32_t(bytes[at + 1]) << 16) |
           (std::uint32_t(bytes[at + 2]) << 8) | std::uint32_t(bytes[at + 3]);
  };
  const std::uint32_t expected_magic = 0x0800u | expected_dims;
  if (bytes.size() < 4)
    throw Error(file.string() + ": truncated at byte " + std::to_string(bytes.size()) +
                ": expected a 4-byte IDX magic number");
  const std::uint32_t magic = be32(0);
  if (magic != expected_magic)
    throw Error(file.string() + ": bad magic " + hex(magic) + " at byte 0: expected " +
                hex(expected_magic) + " (IDX, unsigned bytes, " + std::to_string(expected_dims) +
                " dimensions)");
  const std::size_t header = 4 + 4 * std::size_t(expected_dims);
  if (bytes.size() < header)
    throw Error(file.string() + ": truncated at byte " + std::to_string(bytes.size()) +
                ": the header needs " + std::to_string(header) + " bytes");
  IdxFile idx;
  std::size_t payload = 1;
  bool overflow = false;  // three 32-bit dimensions can overflow 64 bits: then no file holds it
  for (std::uint32_t d = 0; d < expected_dims; ++d) {
    idx.dims.push_back(be32(4 + 4 * d));
    overflow = overflow || __builtin_mul_overflow(payload, std::size_t{idx.dims.back()}, &payload);
  }
  if (overflow || bytes.size() - header != payload) {
    std::string dims;
    for (auto d : idx.dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    throw Error(file.string() + ": " +
                (overflow || bytes.size() - header < payload ? "truncated" : "trailing data") +
                ": the header (" + dims + ") promises " +
                (overflow ? std::string("more than 2^64") : std::to_string(payload)) +
                " data bytes after byte " + std::to_string(header) + ", the file holds " +
                std::to_string(bytes.size() - header));
  }
  idx.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return idx;
}

fs::path find_file(const fs::path& folder, const std::string& stem) {
  for (const char* suffix : {".gz", ""}) {
    fs::path p = folder / (stem + suffix);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
  }
  throw Error(folder.string() + ": missing " + stem +
              "[.gz] (MNIST/Fashion-MNIST IDX files expected there)");
}

class Mnist final : public Dataset {
 public:
  explicit Mnist(const Params& p) {
    const fs::path folder = p.get_string("path");
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      throw Error(p.key_path("path") + ": '" + folder.string() + "' is not a folder" +
                  (folder.string() == "/usr/share/datasets/fashion-mnist"
                       ? " (install it with: apt-get install dataset-fashion-mnist)"
                       : ""));
    load(folder, "train", split_[0]);
    load(folder, "t10k", split_[1]);
  }

  Shape sample_shape(Layout layout) const override {
    return layout == Layout::nhwc ? Shape{rows_, cols_, 1} : Shape{1, rows_, cols_};
  }
  std::int64_t num_classes() const override { return 10; }
  std::int64_t size(Split s) const override { return split_[static_cast<int>(s)].count; }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const Part& part = split_[static_cast<int>(s)];
      const std::int64_t pixels = rows_ * cols_;
      T* xp = x.data<T>();
      const T scale = T(1) / T(255);
      parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
        const std::int64_t id = indices[static_cast<std::size_t>(i)];
        const std::uint8_t* src = part.images.data() + id * pixels;
        T* dst = xp + i * pixels;
        for (std::int64_t j = 0; j < pixels; ++j) dst[j] = T(src[j]) * scale;
        datasets::write_one_hot<T>(y, i, part.labels[static_cast<std::size_t>(id)]);
      });
    });
  }

 private:
  struct Part {
    std::vector<std::uint8_t> images, labels;
    std::int64_t count = 0;
  };

  void load(const fs::path& folder, const std::string& prefix, Part& part) {
    const fs::path images_file = find_file(folder, prefix + "-images-idx3-ubyte");
    const fs::path labels_file = find_file(folder, prefix + "-labels-idx1-ubyte");
    IdxFile images = read_idx(images_file, 3), labels = read_idx(labels_file, 1);
    if (images.dims[0] != labels.dims[0])
      throw Error(labels_file.string() + ": holds " + std::to_string(labels.dims[0]) +
                  " labels but " + images_file.string() + " holds " +
                  std::to_string(images.dims[0]) + " images");
    if (images.dims[1] == 0 || images.dims[2] == 0)
      throw Error(images_file.string() + ": images of size 0");
    if (rows_ && (rows_ != images.dims[1] || cols_ != images.dims[2]))
      throw Error(images_file.string() + ": images are " + std::to_string(images.dims[1]) + "x" +
                  std::to_string(images.dims[2]) + ", the training images are " +
                  std::to_string(rows_) + "x" + std::to_string(cols_));
    rows_ = images.dims[1];
    cols_ = images.dims[2];
    auto bad =
        std::find_if(labels.data.begin(), labels.data.end(), [](std::uint8_t l) { return l > 9; });
    if (bad != labels.data.end())
      throw Error(labels_file.string() + ": label " + std::to_string(*bad) + " at byte " +
                  std::to_string(8 + (bad - labels.data.begin())) + ": expected a class in 0..9");
    part.count = images.dims[0];
    part.images = std::move(images.data);
    part.labels = std::move(labels.data);
  }

  Part split_[2];
  std::int64_t rows_ = 0, cols_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new Mnist(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "mnist",
                   .description =
                       "MNIST / Fashion-MNIST IDX files (gzip'd or raw), 28x28x1, 10 classes, "
                       "pixels in [0, 1]",
                   .parameters = R"({"path": "/usr/share/datasets/fashion-mnist"})",
                   .traits = R"({"default": true})", .factory = create)
