#include "cifar_binary.hpp"

#include <algorithm>
#include <cmath>

#include "dtnn/parallel.hpp"
#include "dtnn/params.hpp"
#include "one_hot.hpp"
#include "read_file.hpp"
#include "tar_archive.hpp"

namespace dtnn::datasets {

namespace fs = std::filesystem;

namespace {
constexpr std::int64_t kSide = 32, kPixels = kSide * kSide;
}  // namespace

CifarBinary::CifarBinary(const Params& p, CifarFormat format)
    : format_(std::move(format)), standardize_(p.get_bool("standardize")) {
  const fs::path path = p.get_string("path");
  std::error_code ec;
  if (path.empty())
    p.fail("path", "the folder of the " + format_.what + " binary files or its .tar.gz archive");
  if (fs::is_regular_file(path, ec) && is_tar_archive(path)) {
    auto files = untar(path);
    auto take = [&](const std::string& name) {
      return File{path.string() + ":" + name,
                  take_member(files, path, format_.archive_folder, name)};
    };
    for (const auto& f : format_.train_files) add(split_[0], take(f));
    add(split_[1], take(format_.test_file));
  } else if (fs::is_directory(path, ec)) {
    fs::path folder = path;
    if (!fs::exists(folder / format_.test_file) &&
        fs::exists(folder / format_.archive_folder / format_.test_file))
      folder /= format_.archive_folder;
    for (const auto& f : format_.train_files) add(split_[0], load(folder / f));
    add(split_[1], load(folder / format_.test_file));
  } else {
    throw Error(p.key_path("path") + ": '" + path.string() +
                "' is neither a folder nor a .tar.gz archive");
  }
  compute_normalisation();
}

Shape CifarBinary::sample_shape(Layout layout) const {
  return layout == Layout::nhwc ? Shape{kSide, kSide, 3} : Shape{3, kSide, kSide};
}

void CifarBinary::read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const {
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
      write_one_hot<T>(y, i, part.labels[static_cast<std::size_t>(id)]);
    });
  });
}

CifarBinary::File CifarBinary::load(const fs::path& file) const {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::string names;
    for (const auto& f : format_.train_files) names += f + ", ";
    throw Error(file.string() + ": missing (" + format_.what +
                " binary version expected: " + names + format_.test_file + ")");
  }
  return {file.string(), read_file(file)};
}

void CifarBinary::add(Part& part, const File& file) const {
  const auto& [name, bytes] = file;
  const std::int64_t record = format_.label_bytes + 3 * kPixels;
  const auto size = static_cast<std::int64_t>(bytes.size());
  if (size == 0 || size % record != 0)
    throw Error(name + ": truncated at byte " + std::to_string(size / record * record) +
                ": records are " + std::to_string(record) + " bytes (" +
                (format_.label_bytes == 1 ? std::string("a label")
                                          : std::to_string(format_.label_bytes) + " labels") +
                ", then 3x32x32 pixels); the file holds " + std::to_string(size) + " bytes");
  for (std::int64_t r = 0; r < size / record; ++r) {
    const std::int64_t at = r * record + format_.label_at;
    const std::uint8_t label = bytes[static_cast<std::size_t>(at)];
    if (label >= format_.classes)
      throw Error(name + ": label " + std::to_string(label) + " at byte " + std::to_string(at) +
                  ": expected a class in 0.." + std::to_string(format_.classes - 1));
    part.labels.push_back(label);
    part.pixels.insert(part.pixels.end(), bytes.begin() + r * record + format_.label_bytes,
                       bytes.begin() + (r + 1) * record);
  }
  part.count += size / record;
}

// x = pixel * scale + offset per channel: pixel / 255, then standardised with the training
// split's mean and standard deviation of each channel.
void CifarBinary::compute_normalisation() {
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
        const double v = train.pixels[static_cast<std::size_t>((i * 3 + c) * kPixels + p)] / 255.0;
        sum += v;
        sum2 += v * v;
      }
    const double n = double(train.count * kPixels), mean = sum / n;
    const double std = std::sqrt(std::max(sum2 / n - mean * mean, 1e-12));
    scale_[c] = 1.0 / (255.0 * std);
    offset_[c] = -mean / std;
  }
}

}  // namespace dtnn::datasets
