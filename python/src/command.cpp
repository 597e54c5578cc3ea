// dtnn._dtnn.command(args): the dtnn command (apps/dtnn/cli.hpp) in this process, with the
// module's plugin folders and the plugins registered from Python, so that an experiment run by
// `python3 -m dtnn run ...` (and by the dtnn program, which hands itself over to it where plugin
// folders hold .py files) names them like any plugin.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "cli.hpp"
#include "module_support.hpp"

namespace py = pybind11;

namespace dtnn::python {

namespace {

int run_command(std::vector<std::string> args) {
  dtnn_cli::RegistryExtension extension;
  for (const auto& f : registry().folders()) extension.folders.push_back(f.string());
  // The records copied hold the Python classes by a reference taken at dtnn.register: copying
  // them needs no GIL; making a plugin takes it (python_plugins.cpp).
  extension.add = [](Registry& r) {
    for (const PluginRecord& record : registry().records())
      if (record.make) r.add(record);
  };
  dtnn_cli::set_registry_extension(std::move(extension));
  args.insert(args.begin(), "dtnn");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  py::gil_scoped_release release;  // the plugins written in Python take it when called
  return dtnn_cli::run(static_cast<int>(args.size()), argv.data());
}

}  // namespace

void bind_command(py::module_& m) {
  m.def("command", &run_command, py::arg("args"),
        "Runs the dtnn command with these arguments (['run', 'exp.json', ...], as after `dtnn`) "
        "in this process, with the plugins registered from Python; returns its exit status. "
        "`python3 -m dtnn` calls it where plugin folders hold plugins written in Python.");
}

}  // namespace dtnn::python
