// numpy arrays as a dataset (array_dataset.cpp): dtnn.Experiment(..., data=...).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dtnn/dataset.hpp"

namespace dtnn::python {

// data: (x_train, y_train[, x_test, y_test]) or a dict of those names. targets: "classes" (y as
// class ids or one-hot rows) or "values"; classes: the class count (0: from y).
std::shared_ptr<Dataset> array_dataset(const pybind11::handle& data, const std::string& targets,
                                       std::int64_t classes);

}  // namespace dtnn::python
