// The binary versions of CIFAR-10 and CIFAR-100 (https://www.cs.toronto.edu/~kriz/cifar.html),
// from a folder or straight from the archive (read in place, never unpacked to disk). A record is
// `label_bytes` label bytes, of which byte `label_at` is the class, then 3072 pixel bytes: the
// 32x32 red plane, then green, then blue, each row-major. Pixels are scaled to [0, 1], then
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
  int label_bytes = 1;         // CIFAR-100: 2, the coarse class then the fine one
  int label_at = 0;            // which of them is the class
  int classes = 10;
};

class CifarBinary final : public Dataset {
 public:
  CifarBinary(const Params& p, CifarFormat format);

  Shape sample_shape(Layout layout) const override;
  std::int64_t num_classes() const override { return format_.classes; }
  std::int64_t size(Split s) const override { return split_[static_cast<int>(s)].count; }
  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override;

 private:
  struct Part {
    std::vector<std::uint8_t> pixels, labels;  // [count][3][32*32], [count]
    std::int64_t count = 0;
  };
  using File = std::pair<std::string, std::vector<std::uint8_t>>;  // {name, bytes}

  File load(const std::filesystem::path& file) const;
  void add(Part& part, const File& file) const;
  void compute_normalisation();

  CifarFormat format_;
  bool standardize_;
  Part split_[2];
  double scale_[3] = {}, offset_[3] = {};
};

}  // namespace dtnn::datasets
