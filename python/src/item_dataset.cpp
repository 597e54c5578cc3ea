// A Python object with __len__ and __getitem__ (a PyTorch-style dataset) read lazily
// (dtnn.Experiment(..., data=obj, lazy=True)): each batch's items are asked for when dtnn's loader
// reads that batch, under Python's lock, so a dataset larger than memory, or one that decodes or
// augments in Python, trains without being read whole first. Item i is a pair (x, y): x an array of
// the first item's shape, y a class id (classes= gives the count), a one-hot row, or target values
// (targets="values"). Errors name the split, the item and what was expected; an exception raised
// by __getitem__ ends the run with its text.
#include "item_dataset.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/tensor.hpp"

namespace py = pybind11;

namespace dtnn::python {

namespace {

using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;

class LazyItemDataset final : public Dataset {
 public:
  LazyItemDataset(py::object train, py::object test, const std::string& targets,
                  std::int64_t classes)
      : values_(targets == "values") {
    if (targets != "classes" && targets != "values")
      throw Error("data: targets '" + targets +
                  "': expected \"classes\" (class ids or one-hot rows) or \"values\"");
    splits_[0] = std::move(train);
    splits_[1] = std::move(test);
    for (int s = 0; s < 2; ++s)
      sizes_[s] = splits_[s].is_none() ? 0 : static_cast<std::int64_t>(py::len(splits_[s]));
    if (sizes_[0] < 1) throw Error("data: train has no items");
    const auto [x, y] = item(Split::train, 0);
    for (py::ssize_t d = 0; d < x.ndim(); ++d) sample_shape_.push_back(x.shape(d));
    if (sample_shape_.rank() < 1 || sample_shape_.rank() > 4)
      throw Error("data: train[0]'s x has shape " + sample_shape_.str() +
                  ": expected (features,) or (H, W, C)");
    if (values_ || y.ndim() == 1) {
      classes_ = y.ndim() == 1 ? y.shape(0) : 1;
      if (classes != 0 && classes != classes_)
        throw Error("data: classes " + std::to_string(classes) + ": train[0]'s y has " +
                    std::to_string(classes_) + " columns");
    } else {
      classes_ = classes;
      if (classes_ < 1)
        throw Error(
            "data: a lazy item dataset whose y are class ids needs classes=N (finding the "
            "largest id would read every item)");
    }
  }
  ~LazyItemDataset() override {
    py::gil_scoped_acquire gil;
    splits_[0] = py::object();
    splits_[1] = py::object();
  }

  Shape sample_shape(Layout layout) const override {
    if (sample_shape_.rank() != 3 || layout == Layout::nhwc) return sample_shape_;
    return Shape{sample_shape_[2], sample_shape_[0], sample_shape_[1]};
  }
  std::int64_t num_classes() const override { return classes_; }
  bool value_labels() const override { return values_; }
  std::int64_t size(Split s) const override { return sizes_[static_cast<int>(s)]; }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    py::gil_scoped_acquire gil;
    const std::int64_t numel = sample_shape_.numel();
    const bool planes = sample_shape_.rank() == 3 && x.layout() == Layout::nchw;
    const std::int64_t hw = sample_shape_.rank() == 3 ? sample_shape_[0] * sample_shape_[1] : numel;
    const std::int64_t c = numel / hw;
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const std::int64_t id = indices[i];
      DTNN_CHECK(id >= 0 && id < size(s), "dataset: sample index out of range");
      const auto [xi, yi] = item(s, id);
      const std::string where = name(s, id);
      bool same = xi.ndim() == sample_shape_.rank();
      for (int d = 0; same && d < sample_shape_.rank(); ++d) same = xi.shape(d) == sample_shape_[d];
      if (!same)
        throw Error("data: " + where + "'s x is not train[0]'s shape " + sample_shape_.str());
      const std::vector<double> label = label_row(yi, where);
      dispatch_dtype(x.dtype(), [&](auto z) {
        using T = decltype(z);
        T* dst = x.data<T>() + static_cast<std::int64_t>(i) * numel;
        for (std::int64_t q = 0; q < hw; ++q)
          for (std::int64_t ch = 0; ch < c; ++ch) {
            const double v = xi.data()[q * c + ch];
            if (!std::isfinite(v))
              throw Error("data: " + where + "'s x holds a value that is not finite");
            dst[planes ? ch * hw + q : q * c + ch] = static_cast<T>(v);
          }
        T* row = y.data<T>() + static_cast<std::int64_t>(i) * classes_;
        for (std::int64_t k = 0; k < classes_; ++k) row[k] = static_cast<T>(label[k]);
      });
    }
  }

 private:
  static std::string name(Split s, std::int64_t id) {
    return std::string(s == Split::train ? "train" : "test") + "[" + std::to_string(id) + "]";
  }

  // Item id of split s as (x, y) arrays of doubles; the caller holds the GIL.
  std::pair<Doubles, Doubles> item(Split s, std::int64_t id) const {
    const std::string where = name(s, id);
    try {
      const py::object it = splits_[static_cast<int>(s)].attr("__getitem__")(id);
      if (!py::isinstance<py::sequence>(it) || py::len(it) != 2)
        throw Error("data: " + where + ": expected a pair (x, y), got " +
                    std::string(py::str(py::type::of(it))));
      const py::sequence pair = py::reinterpret_borrow<py::sequence>(it);
      Doubles x = Doubles::ensure(pair[0]), y = Doubles::ensure(pair[1]);
      if (!x || !y) throw Error("data: " + where + ": x and y must be arrays of numbers");
      return {std::move(x), std::move(y)};
    } catch (py::error_already_set& e) {
      throw Error("data: " + where + ": " + e.what());
    }
  }

  // y as a row of classes_ values: a class id one-hot, a row or target values as they are.
  std::vector<double> label_row(const Doubles& y, const std::string& where) const {
    std::vector<double> row(static_cast<std::size_t>(classes_), 0.0);
    if (y.ndim() == 1 || values_) {
      if (y.size() != classes_)
        throw Error("data: " + where + "'s y has " + std::to_string(y.size()) +
                    " values, expected " + std::to_string(classes_));
      for (std::int64_t k = 0; k < classes_; ++k) {
        row[static_cast<std::size_t>(k)] = y.data()[k];
        if (!std::isfinite(row[static_cast<std::size_t>(k)]))
          throw Error("data: " + where + "'s y is not finite");
      }
      return row;
    }
    const double id = y.size() == 1 ? y.data()[0] : -1;
    if (!(id >= 0 && id < double(classes_) && id == std::floor(id)))
      throw Error("data: " + where + "'s y = " + std::to_string(id) +
                  ": expected a class id in 0.." + std::to_string(classes_ - 1));
    row[static_cast<std::size_t>(id)] = 1.0;
    return row;
  }

  py::object splits_[2];
  std::int64_t sizes_[2] = {0, 0};
  Shape sample_shape_;
  std::int64_t classes_ = 0;
  bool values_ = false;
};

}  // namespace

std::shared_ptr<Dataset> lazy_item_dataset(py::object train, py::object test,
                                           const std::string& targets, std::int64_t classes) {
  return std::make_shared<LazyItemDataset>(std::move(train), std::move(test), targets, classes);
}

}  // namespace dtnn::python
