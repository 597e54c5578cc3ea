// imagenet: images in class folders (ImageNet's layout, and any other image-folder dataset):
//   <path>/train/<class>/*.{jpg,jpeg,png}    <path>/val/<class>/*.{jpg,jpeg,png}
// Classes are train's folder names in sorted order (val may hold a subset of them). Images are
// decoded, resized, centre-cropped and standardised with ImageNet's channel means and deviations
// (normalize: true) as image_files.hpp says, in background threads.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "dtnn/plugin_api.hpp"
#include "image_files.hpp"
#include "one_hot.hpp"

namespace {

using namespace dtnn;
namespace fs = std::filesystem;

class ImageFolder final : public datasets::ImageFiles {
 public:
  explicit ImageFolder(const Params& p)
      : ImageFiles(p, {.size = p.get_int("size"),
                       .resize = p.get_int("resize"),
                       .threads = p.get_int("threads"),
                       .channels = 3,
                       .imagenet_normalize = p.get_bool("normalize")}) {
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
    const datasets::DatasetFolder dataset(root);
    scan(root / "train", Split::train, dataset);
    if (files(Split::train).empty())
      throw Error((root / "train").string() +
                  ": no images in its class folders (expected <class>/*.jpg, *.jpeg or *.png)");
    if (fs::is_directory(root / "val", ec)) scan(root / "val", Split::test, dataset);
  }

  std::int64_t num_classes() const override { return static_cast<std::int64_t>(classes_.size()); }

 private:
  void write_label(Tensor& y, std::int64_t row, Split s, std::int64_t id) const override {
    const std::int64_t label = labels_[static_cast<int>(s)][static_cast<std::size_t>(id)];
    dispatch_dtype(y.dtype(), [&](auto z) { datasets::write_one_hot<decltype(z)>(y, row, label); });
  }

  void scan(const fs::path& folder, Split s, const datasets::DatasetFolder& dataset) {
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
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(dir))
        if (dataset.holds_image(entry)) found.push_back(entry.path());
      std::sort(found.begin(), found.end());
      for (auto& f : found) {
        files(s).push_back(std::move(f));
        labels_[static_cast<int>(s)].push_back(static_cast<std::int64_t>(c));
      }
    }
  }

  std::vector<std::string> classes_;
  std::vector<std::int64_t> labels_[2];
};

Plugin* create(const Params& p, const PluginContext&) { return new ImageFolder(p); }

}  // namespace

// Built twice (CMakeLists.txt): as "imagenet", PyDTNN's name, and as "folder", for any image set
// laid out the same way.
#ifndef DTNN_IMAGE_FOLDER_PLUGIN
#define DTNN_IMAGE_FOLDER_PLUGIN "imagenet"
#endif

// It reads files: the conformance checks it on files that the harness writes (its fixtures).
DTNN_EXPORT_PLUGIN(
        .kind = "dataset", .name = DTNN_IMAGE_FOLDER_PLUGIN,
        .description =
            "images in class folders (<path>/train/<class>/*.jpg|png, <path>/val/...), decoded "
            "in background threads, resized and centre-cropped",
        .parameters = R"({"path": "", "size": 224, "resize": 0, "threads": 2, "normalize": true})",
        .traits = R"({"conformance": [], "fixtures": [{"kind": "image_classes", "per_class": 3,
            "params": {"path": "$dir", "size": 8, "resize": 8}}]})",
        .factory = create)
