// image_labels: images with their labels in a CSV file, any number of labels an image
// (multi-label; NIH ChestX-ray14's layout, PyDTNN 3.x's chestxray, and any laid out alike; also
// by 3.x's names "chestxray" and "chest_xray14", its defaults being that dataset's files):
//   <path>/<labels>        CSV whose header names image_column and labels_column; an image's
//                          labels are joined by `separator` ("Atelectasis|Effusion")
//   <path>/<images>/...    the image files (JPEG, PNG), found by file name anywhere below
//   <path>/<train_list>    the training images' names, one a line; <path>/<test_list> the test
//                          ones. Without the two lists every test_every-th CSV row is a test image.
// Classes are `classes` when given (a label outside them is an error), else every label the CSV
// names, sorted. y holds a 0/1 column per class (value labels: binary_cross_entropy over sigmoid
// outputs). Images are decoded as image_files.hpp says: pixels / 255, one grey channel
// (channels: 1) or three. Errors name the file and line: a missing column, a listed image the
// CSV does not label or that is not under images/, a label outside `classes`.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dtnn/plugin_api.hpp"
#include "image_files.hpp"
#include "text_tokenizers.hpp"

namespace {

using namespace dtnn;
namespace fs = std::filesystem;

constexpr const char* kParameters = R"({
  "path": "", "labels": "Data_Entry_2017_v2020.csv", "image_column": "Image Index",
  "labels_column": "Finding Labels", "separator": "|", "images": "images",
  "train_list": "train_val_list.txt", "test_list": "test_list.txt", "test_every": 10,
  "classes": [], "size": 224, "resize": 0, "channels": 1, "threads": 2})";

// The fields of one CSV line: commas separate, double quotes enclose a field ("" is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// The labels of a field ("Atelectasis|Effusion"); an empty field has none.
std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    std::string part =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!part.empty()) parts.push_back(std::move(part));
    if (end == std::string::npos) break;
    start = end + separator.size();
  }
  return parts;
}

class ImageLabels final : public datasets::ImageFiles {
 public:
  explicit ImageLabels(const Params& p)
      : ImageFiles(p, {.size = p.get_int("size"),
                       .resize = p.get_int("resize"),
                       .threads = p.get_int("threads"),
                       .channels = static_cast<int>(p.get_int("channels")),
                       .imagenet_normalize = false}) {
    if (p.get_int("channels") != 1 && p.get_int("channels") != 3)
      p.fail("channels", "1 (grey, the RGB mean) or 3");
    const fs::path root = p.get_string("path");
    std::error_code ec;
    if (root.empty() || !fs::is_directory(root, ec))
      p.fail("path", "the dataset's folder (holding the labels CSV and the images folder)");
    const std::string separator = p.get_string("separator");
    if (separator.empty()) p.fail("separator", "a non-empty string between an image's labels");
    classes_ = p.get_strings("classes");
    const bool given = !classes_.empty();

    // The CSV: {image name: its label names}, in row order.
    const fs::path csv = root / p.get_string("labels");
    const std::vector<std::string> lines = datasets::read_lines(csv, true);
    if (lines.empty() || lines[0].empty())
      throw Error(csv.string() + ": empty (a header row first)");
    const std::vector<std::string> header = csv_fields(lines[0]);
    auto column = [&](const std::string& key) {
      const std::string name = p.get_string(key);
      auto it = std::find(header.begin(), header.end(), name);
      if (it == header.end())
        throw Error(csv.string() + ": line 1: no column '" + name + "' (" + p.key_path(key) +
                    "); the header is: " + lines[0]);
      return static_cast<std::size_t>(it - header.begin());
    };
    const std::size_t image_at = column("image_column"), labels_at = column("labels_column");
    std::vector<std::string> names;
    std::map<std::string, std::vector<std::string>> labels_of;
    std::set<std::string> seen;
    for (std::size_t l = 1; l < lines.size(); ++l) {
      if (lines[l].empty()) continue;
      const std::vector<std::string> fields = csv_fields(lines[l]);
      const std::string where = csv.string() + ": line " + std::to_string(l + 1);
      if (fields.size() <= std::max(image_at, labels_at))
        throw Error(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                    std::to_string(header.size()));
      const std::string& name = fields[image_at];
      const auto [row, added] = labels_of.emplace(name, split(fields[labels_at], separator));
      if (!added) throw Error(where + ": image '" + name + "' is labelled a second time");
      for (const std::string& label : row->second) {
        if (given && std::find(classes_.begin(), classes_.end(), label) == classes_.end())
          throw Error(where + ": label '" + label + "' is not among " + p.key_path("classes"));
        seen.insert(label);
      }
      names.push_back(name);
    }
    if (names.empty()) throw Error(csv.string() + ": no rows after the header");
    if (!given) classes_.assign(seen.begin(), seen.end());
    if (classes_.empty())
      throw Error(csv.string() + ": every row's '" + p.get_string("labels_column") +
                  "' is empty: no class to learn (give " + p.key_path("classes") +
                  ", or label the images)");

    // The image files, by name.
    const fs::path images = root / p.get_string("images");
    if (!fs::is_directory(images, ec))
      throw Error(p.key_path("images") + ": '" + images.string() + "' is not a folder");
    std::map<std::string, fs::path> file_of;
    const datasets::DatasetFolder dataset(root);
    for (const auto& entry : fs::recursive_directory_iterator(images))
      if (dataset.holds_image(entry))
        file_of.emplace(entry.path().filename().string(), entry.path());

    auto add = [&](Split s, const std::string& name, const std::string& where) {
      auto labels = labels_of.find(name);
      if (labels == labels_of.end())
        throw Error(where + ": image '" + name + "' has no row in " + csv.string());
      auto file = file_of.find(name);
      if (file == file_of.end())
        throw Error(where + ": image '" + name + "' is not under " + images.string());
      files(s).push_back(file->second);
      std::vector<std::int64_t>& ids = labels_[static_cast<int>(s)].emplace_back();
      for (const std::string& label : labels->second)
        ids.push_back(std::lower_bound(classes_.begin(), classes_.end(), label) - classes_.begin());
    };
    if (given) std::sort(classes_.begin(), classes_.end());
    const fs::path train_list = root / p.get_string("train_list"),
                   test_list = root / p.get_string("test_list");
    if (fs::is_regular_file(train_list, ec) && fs::is_regular_file(test_list, ec)) {
      for (const auto& [list, s] :
           {std::pair{train_list, Split::train}, {test_list, Split::test}}) {
        const std::vector<std::string> listed = datasets::read_lines(list, true);
        for (std::size_t l = 0; l < listed.size(); ++l)
          if (!listed[l].empty())
            add(s, listed[l], list.string() + ": line " + std::to_string(l + 1));
      }
    } else {
      const std::int64_t every = p.get_int("test_every");
      if (every < 2) p.fail("test_every", "an integer >= 2 (every N-th row is a test image)");
      for (std::size_t i = 0; i < names.size(); ++i)
        add((static_cast<std::int64_t>(i) + 1) % every == 0 ? Split::test : Split::train, names[i],
            csv.string() + ": line " + std::to_string(i + 2));
    }
  }

  std::int64_t num_classes() const override { return static_cast<std::int64_t>(classes_.size()); }
  bool value_labels() const override { return true; }

 private:
  void write_label(Tensor& y, std::int64_t row, Split s, std::int64_t id) const override {
    const std::vector<std::int64_t>& ids =
        labels_[static_cast<int>(s)][static_cast<std::size_t>(id)];
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      T* out = y.data<T>() + row * num_classes();
      std::fill(out, out + num_classes(), T(0));
      for (const std::int64_t c : ids) out[c] = T(1);
    });
  }

  std::vector<std::string> classes_;                  // sorted
  std::vector<std::vector<std::int64_t>> labels_[2];  // each sample's class ids
};

Plugin* create(const Params& p, const PluginContext&) { return new ImageLabels(p); }

}  // namespace

// It reads files: the conformance checks it on files that the harness writes (its fixtures).
DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "image_labels",
                   .description =
                       "images with several labels each from a CSV file (NIH ChestX-ray14's "
                       "layout), a 0/1 target per class, decoded in background threads",
                   .parameters = kParameters,
                   .traits = R"({"conformance": [], "aliases": ["chestxray", "chest_xray14"],
                       "fixtures": [{"kind": "labelled_images", "count": 8,
                       "params": {"path": "$dir", "size": 8, "resize": 8}}]})",
                   .factory = create)
