// numpy arrays as a dataset (array_dataset.cpp): dtnn.Experiment(..., data=...).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dtnn/dataset.hpp"

namespace dtnn::python {

// data: (x_train, y_train[, x_test, y_test]) or a dict of those names, or an item dataset (an
// object with __len__ and __getitem__, or {"train": obj, "test": obj}). targets: "classes" (y as
// class ids or one-hot rows) or "values"; classes: the class count (0: from y). lazy: an item
// dataset read batch by batch as dtnn trains (item_dataset.hpp), not whole at the start.
std::shared_ptr<Dataset> array_dataset(const pybind11::handle& data, const std::string& targets,
                                       std::int64_t classes, bool lazy = false);

}  // namespace dtnn::python
