// Shared by the doctest files: the build tree's plugins and small helpers.
#pragma once
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "dtnn/config.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/model.hpp"
#include "dtnn/params.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"

namespace dtnn::test {

inline const Registry& plugins() {
  static const Registry registry = [] {
    initialize_runtime();
    return Registry({DTNN_TEST_PLUGIN_DIR});
  }();
  return registry;
}

// A zoo model by name, its "$classes" (the dataset's, in a run) set to `classes`.
inline ModelSpec zoo_model(const std::string& name, std::int64_t classes = 10) {
  ModelSpec spec = load_model_spec(resolve_model_path(name, ""));
  substitute_sizes(spec.layers, {{"$classes", classes}});
  return spec;
}

inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() /
           ("dtnn-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// A message of the Error that f throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace dtnn::test
