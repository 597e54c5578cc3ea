// Experiment files: JSON parsing and validation of every key (make_experiment), with a --set.
#include "dtnn/config.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  const std::string input = fuzz::text(data, size);
  // The last line, when it holds '=', is a --set override; the rest the experiment.
  const std::size_t nl = input.rfind('\n');
  std::vector<std::string> overrides;
  std::string document = input;
  if (nl != std::string::npos && input.find('=', nl) != std::string::npos) {
    overrides.push_back(input.substr(nl + 1));
    document = input.substr(0, nl);
  }
  fuzz::expect_clear_errors(
      [&] { make_experiment(parse_json(document, "fuzz.json"), overrides, "fuzz.json"); });
  return 0;
}
