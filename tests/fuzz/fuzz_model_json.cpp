// Model files: JSON parsing, the model grammar (repeat, add and concat blocks, fusions) and
// building the model through the layer plugins, on 8x8x2 samples. Shapes are kept small: a
// document with a number above 64 is skipped (a layer of 2^40 units is a memory test, which
// tests/bad_inputs.py makes; here it would only be slow).
#include "dtnn/config.hpp"
#include "fuzz_support.hpp"

namespace {

bool small_numbers(const nlohmann::json& j, int depth = 0) {
  if (depth > dtnn::kMaxJsonDepth) return false;
  if (j.is_number()) return j.get<double>() <= 64 && j.get<double>() >= -64;
  if (j.is_structured())
    for (const auto& v : j)
      if (!small_numbers(v, depth + 1)) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  fuzz::expect_clear_errors([&] {
    const nlohmann::json j = parse_json(fuzz::text(data, size), "fuzz.json");
    if (!small_numbers(j)) return;
    ModelSpec spec = parse_model_spec(j, "fuzz.json");
    ModelOptions options;
    options.max_batch = 2;
    options.fusions = {"conv_relu", "conv_batchnorm", "conv_batchnorm_relu", "batchnorm_relu"};
    Model model(spec, options, Shape{8, 8, 2}, fuzz::plugins());
  });
  return 0;
}
