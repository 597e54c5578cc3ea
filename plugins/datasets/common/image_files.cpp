#include "image_files.hpp"

#include <algorithm>
#include <cctype>
#include <system_error>

#include "dtnn/error.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/params.hpp"
#include "image_io.hpp"

namespace dtnn::datasets {

namespace fs = std::filesystem;

namespace {
constexpr float kMean[3] = {0.485f, 0.456f, 0.406f}, kStd[3] = {0.229f, 0.224f, 0.225f};
}  // namespace

bool is_image_file(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ".jpg" || e == ".jpeg" || e == ".png";
}

DatasetFolder::DatasetFolder(const fs::path& root) {
  std::error_code ec;
  real_ = fs::canonical(root, ec);
  if (ec) throw Error(root.string() + ": cannot resolve its path (" + ec.message() + ")");
}

bool DatasetFolder::holds_image(const fs::directory_entry& entry) const {
  std::error_code ec;
  if (!is_image_file(entry.path()) || !entry.is_regular_file(ec)) return false;
  // Where the file really is, every link on the way followed (the entry's own, or a folder's).
  const fs::path real = fs::canonical(entry.path(), ec);
  if (ec) throw Error(entry.path().string() + ": cannot resolve its path (" + ec.message() + ")");
  if (std::mismatch(real_.begin(), real_.end(), real.begin(), real.end()).first == real_.end())
    return true;
  throw Error(entry.path().string() + ": " +
              (entry.is_symlink(ec) ? "a symbolic link to " : "reached through a link as ") +
              real.string() + ", outside the dataset folder " + real_.string() +
              ": refused (a dataset's files stay inside its folder)");
}

ImageFiles::ImageFiles(const Params& p, ImageOptions options) : options_(options) {
  if (options_.size < 1) p.fail("size", "a positive image side");
  if (options_.resize == 0) options_.resize = options_.size * 8 / 7;  // 256 for 224, as ImageNet
  if (options_.resize < options_.size) p.fail("resize", "a side >= size (0: size * 8 / 7)");
  if (options_.threads < 1 || options_.threads > 1024)
    p.fail("threads", "a number of decoding threads from 1 to 1024");
}

ImageFiles::~ImageFiles() {
  std::lock_guard lock(mutex_);
  finish_pending();
}

Shape ImageFiles::sample_shape(Layout layout) const {
  const std::int64_t s = options_.size, c = options_.channels;
  return layout == Layout::nhwc ? Shape{s, s, c} : Shape{c, s, s};
}

std::int64_t ImageFiles::size(Split s) const {
  return static_cast<std::int64_t>(files_[static_cast<int>(s)].size());
}

void ImageFiles::prefetch(Split split, std::span<const std::int64_t> indices) const {
  std::lock_guard lock(mutex_);
  finish_pending();  // one batch ahead at most (an error there is the read's to report)
  pending_.split = split;
  pending_.ids.assign(indices.begin(), indices.end());
  pending_.pixels.resize(indices.size() * static_cast<std::size_t>(sample_values()));
  pending_.jobs.clear();
  const auto threads = static_cast<std::size_t>(options_.threads);
  for (std::size_t t = 0; t < threads; ++t) {
    try {
      pending_.jobs.push_back(std::async(std::launch::async, [this, t, threads] {
        for (std::size_t i = t; i < pending_.ids.size(); i += threads)
          decode(pending_.split, pending_.ids[i],
                 pending_.pixels.data() + i * static_cast<std::size_t>(sample_values()));
      }));
    } catch (const std::system_error& e) {  // the system's thread limit
      finish_pending();
      pending_.ids.clear();
      throw Error("dataset: cannot start decoding thread " + std::to_string(t + 1) + " of " +
                  std::to_string(threads) + " (" + e.what() +
                  "): set the dataset's \"threads\" lower");
    }
  }
}

void ImageFiles::read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const {
  const std::int64_t sample = sample_values();
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
    parallel_for(static_cast<std::int64_t>(indices.size()), 1, [&](std::int64_t i) {
      decode(s, indices[static_cast<std::size_t>(i)], local.data() + i * sample);
    });  // a decoding error is rethrown here, after the loop
  }
  const float* pixels = prefetched ? pending_.pixels.data() : local.data();
  const bool nhwc = x.layout() == Layout::nhwc;
  const std::int64_t hw = options_.size * options_.size, channels = options_.channels;
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
      const float* src = pixels + i * sample;  // HWC
      T* dst = x.data<T>() + i * sample;
      for (std::int64_t p = 0; p < hw; ++p)
        for (std::int64_t c = 0; c < channels; ++c)
          dst[nhwc ? p * channels + c : c * hw + p] = static_cast<T>(src[p * channels + c]);
      write_label(y, i, s, indices[static_cast<std::size_t>(i)]);
    });
  });
}

// Waits for the background jobs; the first error they threw, if any.
std::exception_ptr ImageFiles::finish_pending() const {
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

// Sample id of split s into out [size][size][channels], normalised.
void ImageFiles::decode(Split s, std::int64_t id, float* out) const {
  const RgbImage image =
      decode_image(files_[static_cast<int>(s)][static_cast<std::size_t>(id)], options_.resize);
  const std::int64_t hw = options_.size * options_.size;
  if (options_.channels == 3) {  // straight into out, normalised in place
    resize_and_crop(image, options_.resize, options_.size, out);
    for (std::int64_t p = 0; p < hw; ++p)
      for (int c = 0; c < 3; ++c) {
        float& v = out[p * 3 + c];
        v = options_.imagenet_normalize ? (v / 255.0f - kMean[c]) / kStd[c] : v / 255.0f;
      }
    return;
  }
  std::vector<float> rgb(static_cast<std::size_t>(hw * 3));  // grey: the mean of the three
  resize_and_crop(image, options_.resize, options_.size, rgb.data());
  for (std::int64_t p = 0; p < hw; ++p)
    out[p] = (rgb[p * 3] + rgb[p * 3 + 1] + rgb[p * 3 + 2]) / (3.0f * 255.0f);
}

}  // namespace dtnn::datasets
