// A Python item dataset read lazily, batch by batch (item_dataset.cpp): dtnn.Experiment(...,
// data=obj, lazy=True).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dtnn/dataset.hpp"

namespace dtnn::python {

// train, test: objects with __len__ and __getitem__ giving (x, y) pairs (test may be None).
std::shared_ptr<Dataset> lazy_item_dataset(pybind11::object train, pybind11::object test,
                                           const std::string& targets, std::int64_t classes);

}  // namespace dtnn::python
