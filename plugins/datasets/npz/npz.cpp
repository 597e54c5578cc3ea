// npz: a dataset in one NumPy archive with x_train, y_train, x_test, y_test (PyDTNN's and Keras's
// way of shipping small datasets).
//   x: (N, H, W, C) images (layout "NHWC", the default) or (N, C, H, W) ("NCHW"); (N, H, W)
//      grey images; or (N, F) feature vectors. Any float or integer type; integers are scaled
//      by 1/255 unless scale says otherwise (scale 0: that default; floats: 1).
//   y: targets "classes" (the default): (N,) class indices (classes: the given count, or the
//      largest index + 1) or (N, classes) one-hot rows; targets "values" (regression, PyDTNN
//      3.x's tsunami-style data, or multi-label 0/1 columns): (N,) or (N, K) values taken as they
//      are, K outputs (loss mse, or binary_cross_entropy over sigmoids); or (N, H, W) and
//      (N, H, W, C) masks (segmentation: loss dice), taken flat in the file's order, which a
//      model's (H, W, C) output matches (both layouts when C is 1).
// Checked whole at start-up: errors name the file, the array and what was expected.
#include "dtnn/npz.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "dtnn/array_dataset.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class NpzDataset final : public ArrayDataset {
 public:
  explicit NpzDataset(const Params& p) {
    const std::string path = p.get_string("path");
    if (path.empty()) p.fail("path", "an .npz file with x_train, y_train, x_test, y_test");
    const std::string layout = p.get_string("layout");
    if (layout != "NHWC" && layout != "NCHW") p.fail("layout", "\"NHWC\" or \"NCHW\"");
    std::int64_t classes = p.get_int("classes");
    if (classes < 0) p.fail("classes", "a class count >= 0 (0: from the labels)");
    const std::string targets = p.get_string("targets");
    if (targets != "classes" && targets != "values")
      p.fail("targets",
             "\"classes\" (class indices or one-hot rows) or \"values\" (taken as they are)");
    values_ = targets == "values";
    std::map<std::string, NpyArray> arrays;
    for (auto& [key, array] : read_npz(path)) arrays[key] = std::move(array);
    auto take = [&](const char* key) -> NpyArray& {
      auto it = arrays.find(key);
      if (it == arrays.end())
        throw Error(path + ": no array '" + key +
                    "' (x_train, y_train, x_test and y_test expected)");
      return it->second;
    };
    NpyArray &xtr = take("x_train"), &ytr = take("y_train"), &xte = take("x_test"),
             &yte = take("y_test");
    // Per-sample shape, HWC.
    const auto& d = xtr.shape;
    if (d.size() == 4)
      sample_shape_ = layout == "NHWC" ? Shape{d[1], d[2], d[3]} : Shape{d[2], d[3], d[1]};
    else if (d.size() == 3)
      sample_shape_ = Shape{d[1], d[2], 1};
    else if (d.size() == 2)
      sample_shape_ = Shape{d[1]};
    else
      throw Error(path + ": x_train has shape " + xtr.shape_str() +
                  ": expected (N, H, W, C), (N, C, H, W), (N, H, W) or (N, F)");
    if (values_) {
      std::int64_t columns = 1;
      for (std::size_t i = 1; i < ytr.shape.size(); ++i) columns *= ytr.shape[i];
      if (classes != 0 && classes != columns)
        p.fail("classes", "0 or y_train's " + std::to_string(columns) + " target columns");
      classes = columns;
    } else if (classes == 0) {
      classes = std::max(infer_classes(ytr), infer_classes(yte));
    }
    classes_ = classes;
    double scale = p.get_double("scale");
    if (scale == 0) scale = xtr.kind == 'f' ? 1.0 : 1.0 / 255.0;
    load(path, "train", xtr, ytr, layout == "NCHW" && d.size() == 4, scale, part(Split::train));
    load(path, "test", xte, yte, layout == "NCHW" && d.size() == 4, scale, part(Split::test));
  }

 private:
  static std::int64_t infer_classes(const NpyArray& y) {
    if (y.shape.size() == 2) return y.shape[1];
    double top = 0;
    for (std::int64_t i = 0; i < y.numel(); ++i) top = std::max(top, y.value(i));
    return static_cast<std::int64_t>(top) + 1;
  }

  void load(const std::string& path, const std::string& split, const NpyArray& x, const NpyArray& y,
            bool planes, double scale, Part& out) const {
    const std::string xs = "x_" + split, ys = "y_" + split;
    const std::int64_t n = x.shape.empty() ? 0 : x.shape[0], size = sample_shape_.numel();
    if (x.numel() != n * size)
      throw Error(path + ": " + xs + " has shape " + x.shape_str() + ", x_train's samples are " +
                  sample_shape_.str());
    if (y.shape.empty() || y.shape[0] != n)
      throw Error(path + ": " + ys + " has shape " + y.shape_str() + ": expected " +
                  std::to_string(n) + " labels, one per sample of " + xs);
    if (!values_ && y.shape.size() == 2 && y.shape[1] != classes_)
      throw Error(path + ": " + ys + " has " + std::to_string(y.shape[1]) + " columns, expected " +
                  std::to_string(classes_) + " (one per class)");
    if (!values_ && y.shape.size() > 2)
      throw Error(path + ": " + ys + ": expected (N,) or (N, classes)");
    if (values_ && y.numel() != n * classes_)
      throw Error(path + ": " + ys + " has shape " + y.shape_str() + ": expected " +
                  std::to_string(classes_) + " values per sample, as y_train has");
    out.count = n;
    out.x.resize(static_cast<std::size_t>(n * size));
    const std::int64_t hw = sample_shape_.rank() == 3 ? sample_shape_[0] * sample_shape_[1] : size,
                       c = size / hw;
    for (std::int64_t s = 0; s < n; ++s)
      for (std::int64_t p = 0; p < hw; ++p)
        for (std::int64_t ch = 0; ch < c; ++ch) {  // into HWC
          const std::int64_t at = s * size + (planes ? ch * hw + p : p * c + ch);
          const auto v = static_cast<float>(x.value(at) * scale);
          if (!std::isfinite(v))
            throw Error(
                path + ": " + xs + ": sample " + std::to_string(s) + ", element " +
                std::to_string(at - s * size) + " is " + std::to_string(x.value(at)) +
                (std::isfinite(x.value(at)) ? " (beyond float32's range once scaled)" : "") +
                ": inputs must be finite numbers");
          out.x[static_cast<std::size_t>(s * size + p * c + ch)] = v;
        }
    out.y.assign(static_cast<std::size_t>(n * classes_), 0.0f);
    for (std::int64_t s = 0; s < n; ++s) {
      if (values_) {
        for (std::int64_t k = 0; k < classes_; ++k) {
          const double v = y.value(s * classes_ + k);
          if (!std::isfinite(v))
            throw Error(path + ": " + ys + "[" + std::to_string(s) + "]: " + std::to_string(v) +
                        ": expected a finite target");
          out.y[static_cast<std::size_t>(s * classes_ + k)] = static_cast<float>(v);
        }
        continue;
      }
      if (y.shape.size() == 2) {
        for (std::int64_t k = 0; k < classes_; ++k) {
          const double v = y.value(s * classes_ + k);
          if (!std::isfinite(v))
            throw Error(path + ": " + ys + "[" + std::to_string(s) + "][" + std::to_string(k) +
                        "]: " + std::to_string(v) + ": expected a finite one-hot value");
          out.y[static_cast<std::size_t>(s * classes_ + k)] = static_cast<float>(v);
        }
        continue;
      }
      const double label = y.value(s);
      if (label < 0 || label >= double(classes_) || label != std::floor(label))
        throw Error(path + ": " + ys + "[" + std::to_string(s) + "] = " + std::to_string(label) +
                    ": expected a class index in 0.." + std::to_string(classes_ - 1));
      out.y[static_cast<std::size_t>(s * classes_ + static_cast<std::int64_t>(label))] = 1.0f;
    }
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new NpzDataset(p); }

}  // namespace

// It reads files: the conformance checks it on an archive the harness writes. PyDTNN 3.x's
// "archive" is this with its layout (NCHW) and its targets (y passed as it is).
constexpr const char* kTraits = R"({"conformance": [], "aliases": ["archive"],
    "fixtures": [{"kind": "npz", "sample": [4, 3, 2], "params": {"path": "$dir/d.npz"}}],
    "alias_defaults": {"archive": {"layout": "NCHW", "targets": "values"}}})";

DTNN_EXPORT_PLUGIN(
        .kind = "dataset", .name = "npz",
        .description =
            "one .npz archive with x_train, y_train, x_test, y_test (images or feature vectors)",
        .parameters =
            R"({"path": "", "layout": "NHWC", "classes": 0, "scale": 0.0, "targets": "classes"})",
        .traits = kTraits, .factory = create)
