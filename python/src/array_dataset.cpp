// A dataset of numpy arrays (dtnn.Experiment(..., data=...)), batched by dtnn as any dataset is:
// the arrays are copied once, into float storage, so that dtnn reads them without Python's lock
// from its loader's and OpenMP's threads.
//   x_*: (N, H, W, C) images (NHWC; served in NCHW too), or (N, F) features, any rank below 6;
//   y_*: (N,) class ids (classes: the given count, else the largest id + 1), or (N, K) rows:
//        one-hot (targets "classes") or values taken as they are (targets "values": regression,
//        multi-label 0/1 columns).
// Every value must be finite; errors name the array, the sample and what was expected.
#include "array_dataset.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/parallel.hpp"

namespace py = pybind11;

namespace dtnn::python {

namespace {

struct Part {
  std::vector<float> x, y;  // [N][sample], [N][classes]
  std::int64_t count = 0;
};

using FloatArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

class ArrayDataset final : public Dataset {
 public:
  ArrayDataset(const py::handle& x_train, const py::handle& y_train, const py::handle& x_test,
               const py::handle& y_test, const std::string& targets, std::int64_t classes)
      : values_(targets == "values") {
    if (targets != "classes" && targets != "values")
      throw Error("data: targets '" + targets +
                  "': expected \"classes\" (class ids or one-hot rows) or \"values\"");
    const FloatArray xtr = as_floats(x_train, "x_train"), ytr = as_floats(y_train, "y_train");
    if (xtr.ndim() < 2 || xtr.ndim() > Shape::kMaxRank)
      throw Error("data: x_train has " + std::to_string(xtr.ndim()) +
                  " dimensions: expected (N, features) or (N, H, W, C)");
    for (py::ssize_t d = 1; d < xtr.ndim(); ++d) shape_.push_back(xtr.shape(d));
    if (values_) {
      classes_ = ytr.ndim() == 2 ? ytr.shape(1) : 1;
      if (classes != 0 && classes != classes_)
        throw Error("data: classes " + std::to_string(classes) + ": y_train has " +
                    std::to_string(classes_) + " target columns");
    } else if (ytr.ndim() == 2) {
      classes_ = ytr.shape(1);
    } else {
      double top = -1;
      for (py::ssize_t i = 0; i < ytr.size(); ++i) top = std::max(top, ytr.data()[i]);
      classes_ = classes != 0 ? classes : static_cast<std::int64_t>(top) + 1;
    }
    if (classes_ < 1) throw Error("data: y_train gives no class");
    load("train", xtr, ytr, split_[0]);
    if (!x_test.is_none() || !y_test.is_none()) {
      if (x_test.is_none() || y_test.is_none())
        throw Error("data: give x_test with y_test, or neither");
      load("test", as_floats(x_test, "x_test"), as_floats(y_test, "y_test"), split_[1]);
    }
  }

  Shape sample_shape(Layout layout) const override {
    if (shape_.rank() != 3 || layout == Layout::nhwc) return shape_;
    return Shape{shape_[2], shape_[0], shape_[1]};
  }
  std::int64_t num_classes() const override { return classes_; }
  bool value_labels() const override { return values_; }
  std::int64_t size(Split s) const override { return split_[static_cast<int>(s)].count; }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    const Part& part = split_[static_cast<int>(s)];
    const std::int64_t size = shape_.numel();
    const bool planes = shape_.rank() == 3 && x.layout() == Layout::nchw;
    const std::int64_t hw = shape_.rank() == 3 ? shape_[0] * shape_[1] : size, c = size / hw;
    for (const std::int64_t id : indices)
      DTNN_CHECK(id >= 0 && id < part.count, "arrays: sample index out of range");
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
        const std::int64_t id = indices[static_cast<std::size_t>(i)];
        const float* src = part.x.data() + id * size;  // as given: HWC
        T* dst = x.data<T>() + i * size;
        for (std::int64_t p = 0; p < hw; ++p)
          for (std::int64_t ch = 0; ch < c; ++ch)
            dst[planes ? ch * hw + p : p * c + ch] = static_cast<T>(src[p * c + ch]);
        const float* label = part.y.data() + id * classes_;
        T* row = y.data<T>() + i * classes_;
        for (std::int64_t k = 0; k < classes_; ++k) row[k] = static_cast<T>(label[k]);
      });
    });
  }

 private:
  static FloatArray as_floats(const py::handle& array, const std::string& name) {
    FloatArray a;
    try {
      a = FloatArray::ensure(array);
    } catch (const py::error_already_set&) {
    }
    if (!a) throw Error("data: " + name + ": expected an array of numbers");
    return a;
  }

  void load(const std::string& split, const FloatArray& x, const FloatArray& y, Part& part) const {
    const std::string xs = "x_" + split, ys = "y_" + split;
    const std::int64_t n = x.ndim() > 0 ? x.shape(0) : 0, size = shape_.numel();
    bool same = x.ndim() == shape_.rank() + 1;
    for (int d = 0; same && d < shape_.rank(); ++d) same = x.shape(d + 1) == shape_[d];
    if (!same) throw Error("data: " + xs + "'s samples are not x_train's " + shape_.str());
    if (y.ndim() == 0 || y.shape(0) != n || y.ndim() > 2)
      throw Error("data: " + ys + ": expected (" + std::to_string(n) + ",) or (" +
                  std::to_string(n) + ", " + std::to_string(classes_) + "), one row per sample");
    if (y.ndim() == 2 && y.shape(1) != classes_)
      throw Error("data: " + ys + " has " + std::to_string(y.shape(1)) + " columns, expected " +
                  std::to_string(classes_));
    if (values_ && y.ndim() == 1 && classes_ != 1)
      throw Error("data: " + ys + ": expected (" + std::to_string(n) + ", " +
                  std::to_string(classes_) + ") target values");
    part.count = n;
    part.x.resize(static_cast<std::size_t>(n * size));
    for (std::int64_t i = 0; i < n * size; ++i) {
      const double v = x.data()[i];
      if (!std::isfinite(v))
        throw Error("data: " + xs + ": sample " + std::to_string(i / size) + ", value " +
                    std::to_string(i % size) + " is not finite: inputs must be finite numbers");
      part.x[static_cast<std::size_t>(i)] = static_cast<float>(v);
    }
    part.y.assign(static_cast<std::size_t>(n * classes_), 0.0f);
    for (std::int64_t i = 0; i < n; ++i) {
      if (y.ndim() == 2 || values_) {
        for (std::int64_t k = 0; k < classes_; ++k) {
          const double v = y.data()[i * classes_ + k];
          if (!std::isfinite(v))
            throw Error("data: " + ys + "[" + std::to_string(i) + "] is not finite");
          part.y[static_cast<std::size_t>(i * classes_ + k)] = static_cast<float>(v);
        }
        continue;
      }
      const double label = y.data()[i];
      if (!(label >= 0 && label < double(classes_) && label == std::floor(label)))
        throw Error("data: " + ys + "[" + std::to_string(i) + "] = " + std::to_string(label) +
                    ": expected a class id in 0.." + std::to_string(classes_ - 1));
      part.y[static_cast<std::size_t>(i * classes_ + static_cast<std::int64_t>(label))] = 1.0f;
    }
  }

  Shape shape_;
  std::int64_t classes_ = 0;
  bool values_ = false;
  Part split_[2];
};

}  // namespace

std::shared_ptr<Dataset> array_dataset(const py::handle& data, const std::string& targets,
                                       std::int64_t classes) {
  auto item = [&](const char* key, std::size_t index) -> py::object {
    if (py::isinstance<py::dict>(data)) {
      const py::dict d = py::reinterpret_borrow<py::dict>(data);
      return d.contains(key) ? py::reinterpret_borrow<py::object>(d[key]) : py::none();
    }
    const py::sequence s = py::reinterpret_borrow<py::sequence>(data);
    return index < s.size() ? py::reinterpret_borrow<py::object>(s[index]) : py::none();
  };
  if (!py::isinstance<py::dict>(data) && !py::isinstance<py::sequence>(data))
    throw Error("data: expected (x_train, y_train[, x_test, y_test]) or a dict of those names");
  const py::object x_train = item("x_train", 0), y_train = item("y_train", 1);
  if (x_train.is_none() || y_train.is_none()) throw Error("data: x_train and y_train are needed");
  return std::make_shared<ArrayDataset>(x_train, y_train, item("x_test", 2), item("y_test", 3),
                                        targets, classes);
}

}  // namespace dtnn::python
