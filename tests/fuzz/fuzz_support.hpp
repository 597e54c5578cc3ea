// Shared by the libFuzzer targets (tests/fuzz/README.md). A target feeds its input to one loader
// and accepts one outcome besides success: a dtnn::Error, the clear error every bad input must
// get. Anything else (another exception, a crash, a sanitizer report, a hang, an allocation over
// the fuzzer's limit) is a finding.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/model.hpp"
#include "dtnn/registry.hpp"

namespace dtnn::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs f; a dtnn::Error is the expected answer to a bad input, and is swallowed (printed when
// DTNN_FUZZ_VERBOSE is set: a seed should load without one).
template <class F>
void expect_clear_errors(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (std::getenv("DTNN_FUZZ_VERBOSE")) std::printf("  error: %s\n", e.what());
  }
}

// The build's plugins, opened once.
inline const Registry& plugins() {
  static const Registry registry({std::filesystem::path(DTNN_FUZZ_PLUGIN_DIR)});
  return registry;
}

// A folder of this process's own under /tmp, made once.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("dtnn-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline void write(const std::filesystem::path& file, const std::string& bytes) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The tiny model of the checkpoint and weights targets (their seeds were written for it):
// flatten, fc 3, softmax on 2x2x1 float32 samples.
inline Model& tiny_model() {
  static const std::unique_ptr<Model> model = [] {
    ModelSpec spec = parse_model_spec(nlohmann::json::parse(R"({"name": "tiny", "layers": [
        {"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]})"),
                                      "tiny");
    ModelOptions options;
    options.max_batch = 2;
    return std::make_unique<Model>(spec, options, Shape{2, 2, 1}, plugins());
  }();
  return *model;
}

}  // namespace dtnn::fuzz
