// The binary versions of CIFAR-10 and CIFAR-100 (https://www.cs.toronto.edu/~kriz/cifar.html),
// and the sets laid out alike (PyDTNN 3.x's cyclone and tsunamis), from a folder or straight from
// the archive (read in place, never unpacked to disk). A record is `label_bytes` label bytes, of
// which byte `label_at` is the class, then channels x height x width pixel bytes: one row-major
// plane per channel (CIFAR: 32x32 red, then green, then blue). Pixels are scaled to [0, 1], then
// (standardize: true) standardised per channel with the mean and standard deviation of the
// training split. Every file is checked whole at start-up: a bad one is refused with its name,
// the byte offset and what was expected.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/dataset.hpp"

namespace dtnn::datasets {

struct CifarFormat {
  std::string what;                      // "CIFAR-10", in errors
  std::vector<std::string> train_files;  // in order
  std::string test_file;
  std::string archive_folder;  // where the archive unpacks them: "cifar-10-batches-bin"
  std::string archive_name;    // the archive, read from a folder that holds it and no batches
  int label_bytes = 1;         // CIFAR-100: 2, the coarse class then the fine one
  int label_at = 0;            // which of them is the class
  int classes = 10;
  std::int64_t channels = 3, height = 32, width = 32;
  // true: y is the label itself, one value in {0, 1} (a binary target for a sigmoid), not a
  // one-hot row; classes must then be 2.
  bool binary_target = false;
};

// CIFAR-10's files (data_batch_1..5.bin, test_batch.bin under `archive_folder`, one label byte a
// record) for a set laid out alike: CIFAR-10 itself, PyDTNN 3.x's cyclone and tsunamis.
inline CifarFormat cifar10_layout(std::string what, std::string archive_folder,
                                  std::string archive_name, int classes, std::int64_t channels,
                                  std::int64_t height, std::int64_t width) {
  CifarFormat f;
  f.what = std::move(what);
  for (int i = 1; i <= 5; ++i) f.train_files.push_back("data_batch_" + std::to_string(i) + ".bin");
  f.test_file = "test_batch.bin";
  f.archive_folder = std::move(archive_folder);
  f.archive_name = std::move(archive_name);
  f.classes = classes;
  f.channels = channels;
  f.height = height;
  f.width = width;
  return f;
}

class CifarBinary final : public Dataset {
 public:
  CifarBinary(const Params& p, CifarFormat format);

  Shape sample_shape(Layout layout) const override;
  std::int64_t num_classes() const override { return format_.binary_target ? 1 : format_.classes; }
  bool value_labels() const override { return format_.binary_target; }
  std::int64_t size(Split s) const override { return split_[static_cast<int>(s)].count; }
  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override;

 private:
  struct Part {
    std::vector<std::uint8_t> pixels, labels;  // [count][channels][height * width], [count]
    std::int64_t count = 0;
  };
  using File = std::pair<std::string, std::vector<std::uint8_t>>;  // {name, bytes}

  File load(const std::filesystem::path& file) const;
  void add(Part& part, const File& file) const;
  void compute_normalisation();

  CifarFormat format_;
  bool standardize_;
  Part split_[2];
  std::vector<double> scale_, offset_;  // per channel
};

}  // namespace dtnn::datasets
