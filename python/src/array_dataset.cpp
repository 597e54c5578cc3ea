// A dataset of numpy arrays (dtnn.Experiment(..., data=...)), batched by dtnn as any dataset is
// (dtnn/array_dataset.hpp serves it): the arrays are copied once, into float storage, so that dtnn
// reads them without Python's lock from its loader's and OpenMP's threads.
//   x_*: (N, H, W, C) images (NHWC; served in NCHW too), or (N, F) features, any rank below 6;
//   y_*: (N,) class ids (classes: the given count, else the largest id + 1), or (N, K) rows:
//        one-hot (targets "classes") or values taken as they are (targets "values": regression,
//        multi-label 0/1 columns).
// Every value must be finite; errors name the array, the sample and what was expected.
// Or any object with __len__ and __getitem__ (a PyTorch-style dataset) whose item i is a pair
// (x, y): its items are read once, here, and stacked into those arrays (`data=obj`, or
// {"train": obj, "test": obj}); so dtnn's threads never call back into Python. With lazy=True
// they are read batch by batch instead (item_dataset.cpp).
#include "array_dataset.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dtnn/array_dataset.hpp"
#include "dtnn/error.hpp"
#include "item_dataset.hpp"

namespace py = pybind11;

namespace dtnn::python {

namespace {

using FloatArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

class NumpyDataset final : public ArrayDataset {
 public:
  NumpyDataset(const py::handle& x_train, const py::handle& y_train, const py::handle& x_test,
               const py::handle& y_test, const std::string& targets, std::int64_t classes) {
    values_ = targets == "values";
    if (targets != "classes" && targets != "values")
      throw Error("data: targets '" + targets +
                  "': expected \"classes\" (class ids or one-hot rows) or \"values\"");
    const FloatArray xtr = as_floats(x_train, "x_train"), ytr = as_floats(y_train, "y_train");
    if (xtr.ndim() < 2 || xtr.ndim() > Shape::kMaxRank)
      throw Error("data: x_train has " + std::to_string(xtr.ndim()) +
                  " dimensions: expected (N, features) or (N, H, W, C)");
    for (py::ssize_t d = 1; d < xtr.ndim(); ++d) sample_shape_.push_back(xtr.shape(d));
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
    load("train", xtr, ytr, part(Split::train));
    if (!x_test.is_none() || !y_test.is_none()) {
      if (x_test.is_none() || y_test.is_none())
        throw Error("data: give x_test with y_test, or neither");
      load("test", as_floats(x_test, "x_test"), as_floats(y_test, "y_test"), part(Split::test));
    }
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

  void load(const std::string& split, const FloatArray& x, const FloatArray& y, Part& out) const {
    const std::string xs = "x_" + split, ys = "y_" + split;
    const std::int64_t n = x.ndim() > 0 ? x.shape(0) : 0, size = sample_shape_.numel();
    bool same = x.ndim() == sample_shape_.rank() + 1;
    for (int d = 0; same && d < sample_shape_.rank(); ++d)
      same = x.shape(d + 1) == sample_shape_[d];
    if (!same) throw Error("data: " + xs + "'s samples are not x_train's " + sample_shape_.str());
    if (y.ndim() == 0 || y.shape(0) != n || y.ndim() > 2)
      throw Error("data: " + ys + ": expected (" + std::to_string(n) + ",) or (" +
                  std::to_string(n) + ", " + std::to_string(classes_) + "), one row per sample");
    if (y.ndim() == 2 && y.shape(1) != classes_)
      throw Error("data: " + ys + " has " + std::to_string(y.shape(1)) + " columns, expected " +
                  std::to_string(classes_));
    if (values_ && y.ndim() == 1 && classes_ != 1)
      throw Error("data: " + ys + ": expected (" + std::to_string(n) + ", " +
                  std::to_string(classes_) + ") target values");
    out.count = n;
    out.x.resize(static_cast<std::size_t>(n * size));
    for (std::int64_t i = 0; i < n * size; ++i) {
      const double v = x.data()[i];
      if (!std::isfinite(v))
        throw Error("data: " + xs + ": sample " + std::to_string(i / size) + ", value " +
                    std::to_string(i % size) + " is not finite: inputs must be finite numbers");
      out.x[static_cast<std::size_t>(i)] = static_cast<float>(v);
    }
    out.y.assign(static_cast<std::size_t>(n * classes_), 0.0f);
    for (std::int64_t i = 0; i < n; ++i) {
      if (y.ndim() == 2 || values_) {
        for (std::int64_t k = 0; k < classes_; ++k) {
          const double v = y.data()[i * classes_ + k];
          if (!std::isfinite(v))
            throw Error("data: " + ys + "[" + std::to_string(i) + "] is not finite");
          out.y[static_cast<std::size_t>(i * classes_ + k)] = static_cast<float>(v);
        }
        continue;
      }
      const double label = y.data()[i];
      if (!(label >= 0 && label < double(classes_) && label == std::floor(label)))
        throw Error("data: " + ys + "[" + std::to_string(i) + "] = " + std::to_string(label) +
                    ": expected a class id in 0.." + std::to_string(classes_ - 1));
      out.y[static_cast<std::size_t>(i * classes_ + static_cast<std::int64_t>(label))] = 1.0f;
    }
  }
};

}  // namespace

namespace {

// An object with __len__ and __getitem__ that is not one of the containers of arrays.
bool is_item_dataset(const py::handle& data) {
  return !py::isinstance<py::dict>(data) && !py::isinstance<py::tuple>(data) &&
         !py::isinstance<py::list>(data) && py::hasattr(data, "__len__") &&
         py::hasattr(data, "__getitem__");
}

// (x, y) of every item of dataset, stacked by numpy: (N, ...) each.
std::pair<py::object, py::object> stack_items(const py::handle& dataset, const std::string& name) {
  const py::module_ np = py::module_::import("numpy");
  const auto n = static_cast<std::int64_t>(py::len(dataset));
  if (n < 1) throw Error("data: " + name + " has no items");
  py::list xs, ys;
  for (std::int64_t i = 0; i < n; ++i) {
    const py::object item = dataset.attr("__getitem__")(i);
    if (!py::isinstance<py::sequence>(item) || py::len(item) != 2)
      throw Error("data: " + name + "[" + std::to_string(i) + "]: expected a pair (x, y), got " +
                  std::string(py::str(py::type::of(item))));
    const py::sequence pair = py::reinterpret_borrow<py::sequence>(item);
    xs.append(np.attr("asarray")(pair[0], "float64"));
    ys.append(np.attr("asarray")(pair[1], "float64"));
  }
  try {
    return {np.attr("stack")(xs), np.attr("stack")(ys)};
  } catch (const py::error_already_set& e) {
    throw Error("data: " + name + "'s items differ in shape: " + std::string(e.what()));
  }
}

}  // namespace

std::shared_ptr<Dataset> array_dataset(const py::handle& data, const std::string& targets,
                                       std::int64_t classes, bool lazy) {
  // Item datasets: data=obj, or {"train": obj, "test": obj}.
  const bool split_items =
      py::isinstance<py::dict>(data) && py::reinterpret_borrow<py::dict>(data).contains("train");
  if (is_item_dataset(data) || split_items) {
    const py::object train = split_items ? py::reinterpret_borrow<py::dict>(data)["train"]
                                         : py::reinterpret_borrow<py::object>(data);
    if (!is_item_dataset(train))
      throw Error("data: train: expected an object with __len__ and __getitem__");
    if (lazy) {
      py::object test = py::none();
      if (split_items && py::reinterpret_borrow<py::dict>(data).contains("test")) {
        test = py::reinterpret_borrow<py::dict>(data)["test"];
        if (!is_item_dataset(test))
          throw Error("data: test: expected an object with __len__ and __getitem__");
      }
      return lazy_item_dataset(train, test, targets, classes);
    }
    const auto [x_train, y_train] = stack_items(train, "train");
    py::object x_test = py::none(), y_test = py::none();
    if (split_items && py::reinterpret_borrow<py::dict>(data).contains("test")) {
      const py::object test = py::reinterpret_borrow<py::dict>(data)["test"];
      if (!is_item_dataset(test))
        throw Error("data: test: expected an object with __len__ and __getitem__");
      std::tie(x_test, y_test) = stack_items(test, "test");
    }
    return std::make_shared<NumpyDataset>(x_train, y_train, x_test, y_test, targets, classes);
  }
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
  if (lazy)
    throw Error(
        "data: lazy=True reads an item dataset (an object with __len__ and __getitem__) "
        "batch by batch; arrays are in memory already");
  const py::object x_train = item("x_train", 0), y_train = item("y_train", 1);
  if (x_train.is_none() || y_train.is_none()) throw Error("data: x_train and y_train are needed");
  return std::make_shared<NumpyDataset>(x_train, y_train, item("x_test", 2), item("y_test", 3),
                                        targets, classes);
}

}  // namespace dtnn::python
