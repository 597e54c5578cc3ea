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

CifarBinary::CifarBinary(const Params& p, CifarFormat format)
    : format_(std::move(format)), standardize_(p.get_bool("standardize")) {
  fs::path path = p.get_string("path");
  std::error_code ec;
  if (path.empty())
    p.fail("path", "the folder of the " + format_.what + " binary files or its .tar.gz archive");
  // A folder that holds the archive but not the batches (PyDTNN's --dataset-path): the archive.
  if (!format_.archive_name.empty() && fs::is_directory(path, ec) &&
      !fs::exists(path / format_.test_file, ec) &&
      !fs::exists(path / format_.archive_folder / format_.test_file, ec) &&
      fs::is_regular_file(path / format_.archive_name, ec))
    path /= format_.archive_name;
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
  const std::int64_t c = format_.channels, h = format_.height, w = format_.width;
  return layout == Layout::nhwc ? Shape{h, w, c} : Shape{c, h, w};
}

void CifarBinary::read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const {
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    const Part& part = split_[static_cast<int>(s)];
    const bool nhwc = x.layout() == Layout::nhwc;
    const std::int64_t channels = format_.channels, pixels = format_.height * format_.width;
    T* xp = x.data<T>();
    parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
      const std::int64_t id = indices[static_cast<std::size_t>(i)];
      const std::uint8_t* planes = part.pixels.data() + id * channels * pixels;
      T* dst = xp + i * channels * pixels;
      for (std::int64_t c = 0; c < channels; ++c) {
        const T scale = static_cast<T>(scale_[c]), offset = static_cast<T>(offset_[c]);
        for (std::int64_t p = 0; p < pixels; ++p)
          dst[nhwc ? p * channels + c : c * pixels + p] =
              T(planes[c * pixels + p]) * scale + offset;
      }
      const std::uint8_t label = part.labels[static_cast<std::size_t>(id)];
      if (format_.binary_target)
        y.data<T>()[i] = T(label);
      else
        write_one_hot<T>(y, i, label);
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
  const std::int64_t pixels = format_.channels * format_.height * format_.width;
  const std::int64_t record = format_.label_bytes + pixels;
  const auto size = static_cast<std::int64_t>(bytes.size());
  if (size == 0 || size % record != 0)
    throw Error(name + ": truncated at byte " + std::to_string(size / record * record) +
                ": records are " + std::to_string(record) + " bytes (" +
                (format_.label_bytes == 1 ? std::string("a label")
                                          : std::to_string(format_.label_bytes) + " labels") +
                ", then " + std::to_string(format_.channels) + "x" +
                std::to_string(format_.height) + "x" + std::to_string(format_.width) +
                " pixels); the file holds " + std::to_string(size) + " bytes");
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
  const std::int64_t channels = format_.channels, pixels = format_.height * format_.width;
  scale_.assign(static_cast<std::size_t>(channels), 1.0 / 255.0);
  offset_.assign(static_cast<std::size_t>(channels), 0.0);
  if (!standardize_) return;
  const Part& train = split_[0];
  for (std::int64_t c = 0; c < channels; ++c) {
    double sum = 0, sum2 = 0;
    for (std::int64_t i = 0; i < train.count; ++i)
      for (std::int64_t p = 0; p < pixels; ++p) {
        const double v =
            train.pixels[static_cast<std::size_t>((i * channels + c) * pixels + p)] / 255.0;
        sum += v;
        sum2 += v * v;
      }
    const double n = double(train.count * pixels), mean = sum / n;
    const double std = std::sqrt(std::max(sum2 / n - mean * mean, 1e-12));
    scale_[c] = 1.0 / (255.0 * std);
    offset_[c] = -mean / std;
  }
}

}  // namespace dtnn::datasets
