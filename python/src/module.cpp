// The `dtnn` extension module (_dtnn): dtnn.Error, dtnn.info(), dtnn.plugins(), and the
// Experiment class (experiment_binding.cpp). Errors from dtnn arrive as dtnn.Error with dtnn's
// message (the file, key or offset at fault).
#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "dtnn/error.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/version.hpp"
#include "module_support.hpp"

namespace py = pybind11;

namespace dtnn::python {

namespace {

// The folder this extension was loaded from (<build>/python/dtnn, or the install's).
std::filesystem::path module_dir() {
  Dl_info where{};
  if (::dladdr(reinterpret_cast<void*>(&module_dir), &where) == 0 || !where.dli_fname) return {};
  std::error_code ec;
  return std::filesystem::canonical(where.dli_fname, ec).parent_path();
}

}  // namespace

Registry& registry() {
  static const std::unique_ptr<Registry> opened = [] {
    // lib/dtnn/plugins from the package: <build>/python/dtnn/../../lib, or an install's
    // (python/CMakeLists.txt: DTNN_PYTHON_TO_LIB), whichever is there.
    std::vector<std::string> beside;
    for (const std::filesystem::path& lib :
         {std::filesystem::path("../../lib"), std::filesystem::path(DTNN_PYTHON_TO_LIB)}) {
      const std::filesystem::path folder =
          (module_dir() / lib / "dtnn" / "plugins").lexically_normal();
      std::error_code ec;
      if (std::filesystem::is_directory(folder, ec) &&
          std::find(beside.begin(), beside.end(), folder.string()) == beside.end())
        beside.push_back(folder.string());
    }
    auto r = std::make_unique<Registry>(Registry::default_folders(beside));
    for (const std::string& w : r->warnings())
      PyErr_WarnEx(PyExc_RuntimeWarning, ("dtnn: " + w).c_str(), 1);
    return r;
  }();
  return *opened;
}

py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

nlohmann::json from_python(const py::handle& value) {
  const std::string text = py::str(py::module_::import("json").attr("dumps")(value));
  return nlohmann::json::parse(text);
}

// A numpy array over a tensor's memory (no copy), writable; `owner` keeps the memory alive.
py::array view_of(const Tensor& t, const py::object& owner) {
  if (t.device() != Device::cpu)
    throw Error("the model lives on " + std::string(to_string(t.device())) +
                ": numpy views are of host memory (copy with predict, or train on the CPU)");
  const std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  const py::dtype dtype =
      t.dtype() == DType::float64 ? py::dtype::of<double>() : py::dtype::of<float>();
  return py::array(dtype, shape, t.raw(), owner);  // C order: pybind11 computes the strides
}

}  // namespace dtnn::python

PYBIND11_MODULE(_dtnn, m) {
  using namespace dtnn;
  m.doc() = "dtnn: distributed deep-learning training in C++, driven from Python";
  m.attr("__version__") = DTNN_VERSION;
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);

  m.def(
      "info",
      [] {
        initialize_runtime();
        const RuntimeInfo& rt = runtime_info();
        py::dict d;
        d["version"] = DTNN_VERSION;
        d["cpu"] = rt.cpu;
        d["instruction_set"] = isa::name(isa::ceiling());
        d["blis_version"] = rt.blis_version;
        d["blis_kernels"] = rt.blis_kernels;
        d["blis_selection"] = rt.blis_selection;
        d["threads"] = rt.threads;
        py::list folders;
        for (const auto& f : python::registry().folders()) folders.append(f.string());
        d["plugin_folders"] = folders;
        return d;
      },
      "The version, the CPU and the instruction-set level dtnn runs at, BLIS's kernels, the "
      "threads and the plugin folders, as a dict.");

  m.def(
      "plugins",
      [] {
        py::list out;
        for (const PluginRecord& r : python::registry().records()) {
          py::dict d;
          d["kind"] = r.kind;
          d["name"] = r.name;
          d["device"] = to_string(r.device);
          d["status"] = to_string(r.status);
          d["description"] = r.description;
          d["file"] = r.file.string();
          d["reason"] = r.reason;
          d["parameters"] =
              r.parameters.empty()
                  ? py::object(py::dict())
                  : python::to_python(nlohmann::json::parse(r.parameters, nullptr, false));
          out.append(d);
        }
        return out;
      },
      "Every plugin found: kind, name, device, status (ok, unavailable, rejected, load_failed), "
      "description, file, why not ok, and its parameters with their defaults.");

  python::bind_experiment(m);
  python::bind_plugins(m);
  python::bind_command(m);
}
