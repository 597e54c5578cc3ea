// Shared by the doctest files: the build tree's plugins and small helpers.
#pragma once
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "dtnn/layer.hpp"
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
