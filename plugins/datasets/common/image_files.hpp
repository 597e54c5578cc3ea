// Datasets of image files, decoded when read (image_io.hpp): an image's shorter side resized to
// `resize`, its centre size x size kept, its pixels / 255, standardised with ImageNet's channel
// means and deviations (imagenet_normalize) or not, and averaged to one channel (channels: 1) for
// grey images. Decoding runs on `threads` background threads: while a batch trains, the trainer
// names the next one (Dataset::prefetch) and its images are decoded by the time it is read, when
// decoding keeps up; a batch not prefetched is decoded when read, in parallel. A subclass finds
// the files and writes the labels.
#pragma once
#include <cstdint>
#include <exception>
#include <filesystem>
#include <future>
#include <mutex>
#include <vector>

#include "dtnn/dataset.hpp"

namespace dtnn::datasets {

bool is_image_file(const std::filesystem::path& p);  // .jpg, .jpeg, .png (any case)

// A dataset's folder, its real path resolved once: which of the entries found under it are the
// dataset's images.
class DatasetFolder {
 public:
  explicit DatasetFolder(const std::filesystem::path& root);  // Error if root cannot be resolved

  // Whether entry is one of the dataset's images: an image file (is_image_file) that is a regular
  // file. A symbolic link (the entry, or a folder on its way) is followed only while it stays
  // inside the folder; one that leads out of it is an Error naming the entry and where it leads,
  // so a crafted dataset cannot make dtnn read (and train on) files elsewhere.
  bool holds_image(const std::filesystem::directory_entry& entry) const;

 private:
  std::filesystem::path real_;
};

struct ImageOptions {
  std::int64_t size = 224, resize = 0, threads = 2;
  int channels = 3;
  bool imagenet_normalize = true;
};

class ImageFiles : public Dataset {
 public:
  ~ImageFiles() override;

  Shape sample_shape(Layout layout) const override;
  std::int64_t size(Split s) const override;
  void prefetch(Split split, std::span<const std::int64_t> indices) const override;
  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override;

 protected:
  // Checks the options (p names them in errors): size >= 1, resize 0 (size * 8 / 7) or >= size,
  // threads from 1 to 1024.
  ImageFiles(const Params& p, ImageOptions options);
  std::vector<std::filesystem::path>& files(Split s) { return files_[static_cast<int>(s)]; }
  // Row `row` of y: the label of split s's sample `id`.
  virtual void write_label(Tensor& y, std::int64_t row, Split s, std::int64_t id) const = 0;

 private:
  struct Pending {  // the prefetched batch
    Split split = Split::train;
    std::vector<std::int64_t> ids;
    std::vector<float> pixels;
    std::vector<std::future<void>> jobs;
  };
  std::exception_ptr finish_pending() const;  // caller holds mutex_
  void decode(Split s, std::int64_t id, float* out) const;
  std::int64_t sample_values() const { return options_.size * options_.size * options_.channels; }

  ImageOptions options_;
  std::vector<std::filesystem::path> files_[2];
  mutable std::mutex mutex_;
  mutable Pending pending_;
};

}  // namespace dtnn::datasets
