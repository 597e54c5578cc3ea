// What the bindings' files share: the registry the module's experiments use (the plugins beside
// the module, then dtnn's usual folders), and JSON to Python and back through Python's json.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>
#include <string>

#include "dtnn/registry.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::python {

// Opened once, on first use: <module>/../../lib/dtnn/plugins (the build's or the install's), then
// DTNN_PLUGIN_PATH and the install folder (Registry::default_folders).
// Mutable: dtnn.register adds the plugins written in Python (python_plugins.cpp).
Registry& registry();

// A numpy array over a host tensor's memory (no copy), writable; `owner` keeps the memory alive.
pybind11::array view_of(const Tensor& t, const pybind11::object& owner);

pybind11::object to_python(const nlohmann::json& j);
nlohmann::json from_python(const pybind11::handle& value);

void bind_experiment(pybind11::module_& m);
void bind_plugins(pybind11::module_& m);
void bind_command(pybind11::module_& m);

}  // namespace dtnn::python
