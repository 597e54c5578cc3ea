// imagenet: images in class folders (ImageNet's layout, and any other image-folder dataset):
//   <path>/train/<class>/*.{jpg,jpeg,png}    <path>/val/<class>/*.{jpg,jpeg,png}
// Classes are train's folder names in sorted order (val may hold a subset of them). An image is
// decoded (image_io.hpp), its shorter side resized to `resize`, its centre size x size kept, and
// its pixels / 255 standardised with ImageNet's channel means and deviations (normalize: true).
// Decoding runs on `threads` background threads: while a batch trains, the trainer names the next
// one (Dataset::prefetch) and its images are decoded by the time it is read, when decoding keeps
// up; a batch not prefetched is decoded when read, in parallel.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "dtnn/dataset.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "image_io.hpp"
#include "one_hot.hpp"

namespace {

using namespace dtnn;
namespace fs = std::filesystem;

constexpr float kMean[3] = {0.485f, 0.456f, 0.406f}, kStd[3] = {0.229f, 0.224f, 0.225f};

bool is_image(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ".jpg" || e == ".jpeg" || e == ".png";
}

class ImageFolder final : public Dataset {
 public:
  explicit ImageFolder(const Params& p)
      : size_(p.get_int("size")),
        resize_(p.get_int("resize")),
        threads_(p.get_int("threads")),
        normalize_(p.get_bool("normalize")) {
    if (size_ < 1) p.fail("size", "a positive image side");
    if (resize_ == 0) resize_ = size_ * 8 / 7;  // 256 for 224, as ImageNet evaluation does
    if (resize_ < size_) p.fail("resize", "a side >= size (0: size * 8 / 7)");
    if (threads_ < 1) p.fail("threads", "at least 1 decoding thread");
    const fs::path root = p.get_string("path");
    std::error_code ec;
    if (!fs::is_directory(root / "train", ec))
      throw Error(
          p.key_path("path") + ": '" + root.string() +
          "' has no train/ folder (expected <path>/train/<class>/*.jpg and <path>/val/...)");
    for (const auto& entry : fs::directory_iterator(root / "train"))
      if (entry.is_directory()) classes_.push_back(entry.path().filename().string());
    std::sort(classes_.begin(), classes_.end());
    if (classes_.empty()) throw Error((root / "train").string() + ": no class folders");
    scan(root / "train", split_[0]);
    if (fs::is_directory(root / "val", ec)) scan(root / "val", split_[1]);
  }

  ~ImageFolder() override {
    std::lock_guard lock(mutex_);
    finish_pending();
  }

  Shape sample_shape(Layout layout) const override {
    return layout == Layout::nhwc ? Shape{size_, size_, 3} : Shape{3, size_, size_};
  }
  std::int64_t num_classes() const override { return static_cast<std::int64_t>(classes_.size()); }
  std::int64_t size(Split s) const override {
    return static_cast<std::int64_t>(split_[static_cast<int>(s)].files.size());
  }

  void prefetch(Split split, std::span<const std::int64_t> indices) const override {
    std::lock_guard lock(mutex_);
    finish_pending();  // one batch ahead at most (an error there is the read's to report)
    pending_.split = split;
    pending_.ids.assign(indices.begin(), indices.end());
    pending_.pixels.resize(indices.size() * static_cast<std::size_t>(size_ * size_ * 3));
    pending_.jobs.clear();
    for (std::int64_t t = 0; t < threads_; ++t)
      pending_.jobs.push_back(std::async(std::launch::async, [this, t] {
        for (std::size_t i = static_cast<std::size_t>(t); i < pending_.ids.size();
             i += static_cast<std::size_t>(threads_))
          decode(pending_.split, pending_.ids[i], pending_.pixels.data() + i * size_ * size_ * 3);
      }));
  }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    const std::int64_t sample = size_ * size_ * 3;
    std::unique_lock lock(mutex_);
    const bool prefetched =
        pending_.split == s &&
        std::equal(indices.begin(), indices.end(), pending_.ids.begin(), pending_.ids.end());
    if (prefetched) {
      if (std::exception_ptr failure = finish_pending()) {
        pending_.ids.clear();
        std::rethrow_exception(failure);  // a decoding error, from the background
      }
    } else {
      lock.unlock();
    }
    std::vector<float> local;
    if (!prefetched) {  // decode now, in parallel
      local.resize(indices.size() * static_cast<std::size_t>(sample));
      std::exception_ptr failure;
      std::mutex failure_mutex;
      parallel_for(static_cast<std::int64_t>(indices.size()), 1, [&](std::int64_t i) {
        try {
          decode(s, indices[static_cast<std::size_t>(i)], local.data() + i * sample);
        } catch (...) {
          std::lock_guard g(failure_mutex);
          failure = std::current_exception();
        }
      });
      if (failure) std::rethrow_exception(failure);
    }
    const float* pixels = prefetched ? pending_.pixels.data() : local.data();
    const Part& part = split_[static_cast<int>(s)];
    const bool nhwc = x.layout() == Layout::nhwc;
    const std::int64_t hw = size_ * size_;
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
        const float* src = pixels + i * sample;  // HWC
        T* dst = x.data<T>() + i * sample;
        for (std::int64_t p = 0; p < hw; ++p)
          for (int c = 0; c < 3; ++c)
            dst[nhwc ? p * 3 + c : c * hw + p] = static_cast<T>(src[p * 3 + c]);
        datasets::write_one_hot<T>(
            y, i, part.labels[static_cast<std::size_t>(indices[static_cast<std::size_t>(i)])]);
      });
    });
  }

 private:
  struct Part {
    std::vector<fs::path> files;
    std::vector<std::int64_t> labels;
  };
  struct Pending {  // the prefetched batch
    Split split = Split::train;
    std::vector<std::int64_t> ids;
    std::vector<float> pixels;
    std::vector<std::future<void>> jobs;
  };

  // Waits for the background jobs; the first error they threw, if any. (Caller holds mutex_.)
  std::exception_ptr finish_pending() const {
    std::exception_ptr failure;
    for (auto& job : pending_.jobs) {
      try {
        job.get();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
    pending_.jobs.clear();
    return failure;
  }

  void scan(const fs::path& folder, Part& part) {
    for (const auto& entry : fs::directory_iterator(folder)) {
      if (!entry.is_directory()) continue;
      const std::string name = entry.path().filename().string();
      auto it = std::lower_bound(classes_.begin(), classes_.end(), name);
      if (it == classes_.end() || *it != name)
        throw Error(entry.path().string() + ": class '" + name + "' is not among train/'s classes");
    }
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const fs::path dir = folder / classes_[c];
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) continue;
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(dir))
        if (entry.is_regular_file() && is_image(entry.path())) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (auto& f : files) {
        part.files.push_back(std::move(f));
        part.labels.push_back(static_cast<std::int64_t>(c));
      }
    }
  }

  // Sample id of split into out [size][size][3], normalised.
  void decode(Split s, std::int64_t id, float* out) const {
    const datasets::RgbImage image = datasets::decode_image(
        split_[static_cast<int>(s)].files[static_cast<std::size_t>(id)], resize_);
    datasets::resize_and_crop(image, resize_, size_, out);
    for (std::int64_t p = 0; p < size_ * size_; ++p)
      for (int c = 0; c < 3; ++c) {
        float& v = out[p * 3 + c];
        v = normalize_ ? (v / 255.0f - kMean[c]) / kStd[c] : v / 255.0f;
      }
  }

  std::int64_t size_, resize_, threads_;
  bool normalize_;
  std::vector<std::string> classes_;
  Part split_[2];
  mutable std::mutex mutex_;
  mutable Pending pending_;
};

Plugin* create(const Params& p, const PluginContext&) { return new ImageFolder(p); }

}  // namespace

// Built twice (CMakeLists.txt): as "imagenet", PyDTNN's name, and as "folder", for any image set
// laid out the same way.
#ifndef DTNN_IMAGE_FOLDER_PLUGIN
#define DTNN_IMAGE_FOLDER_PLUGIN "imagenet"
#endif

// It reads files: its conformance cases come from whoever has them (tests/test_conformance.cpp).
DTNN_EXPORT_PLUGIN(
        .kind = "dataset", .name = DTNN_IMAGE_FOLDER_PLUGIN,
        .description =
            "images in class folders (<path>/train/<class>/*.jpg|png, <path>/val/...), decoded "
            "in background threads, resized and centre-cropped",
        .parameters = R"({"path": "", "size": 224, "resize": 0, "threads": 2, "normalize": true})",
        .traits = R"({"conformance": []})", .factory = create)
