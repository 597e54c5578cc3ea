// Experiment configuration: one JSON file (// comments allowed) merged over documented defaults
// (docs/config.md), overridden by --set key=value, and validated with errors that name the file,
// the key and what was expected (and, for an unknown key, the closest valid one).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

struct ExperimentConfig {
  nlohmann::json json;         // complete: every key present
  std::filesystem::path file;  // where it came from ("" for an inline config)
  std::string where() const;   // for messages
};

// The deepest nesting of arrays and objects a JSON document dtnn reads may have.
inline constexpr int kMaxJsonDepth = 128;
// Parses text as JSON (// comments allowed); an error names `where`, the line and column. Nesting
// deeper than kMaxJsonDepth is refused while parsing.
DTNN_CORE_EXPORT nlohmann::json parse_json(const std::string& text, const std::string& where);
// As parse_json, but text that is not JSON gives a discarded value (is_discarded()) instead of an
// Error, and no comments are allowed; nesting too deep is still an Error.
DTNN_CORE_EXPORT nlohmann::json parse_json_or_discarded(const std::string& text,
                                                        const std::string& where);
// Reads and parses a JSON file the same way.
DTNN_CORE_EXPORT nlohmann::json read_json_file(const std::filesystem::path& file);
DTNN_CORE_EXPORT nlohmann::json experiment_defaults();
// "training.batch_size=32": the value is parsed as JSON, or taken as a string when it is not.
DTNN_CORE_EXPORT void apply_override(nlohmann::json& config, const std::string& assignment);
// Checks keys and types against the defaults and fills in every missing key.
DTNN_CORE_EXPORT void validate_experiment(nlohmann::json& config, const std::string& where);
DTNN_CORE_EXPORT ExperimentConfig load_experiment(const std::filesystem::path& file,
                                                  const std::vector<std::string>& overrides);
DTNN_CORE_EXPORT ExperimentConfig make_experiment(nlohmann::json config,
                                                  const std::vector<std::string>& overrides,
                                                  const std::string& where = "config");
// The candidate with the smallest edit distance, or "" when none is close.
DTNN_CORE_EXPORT std::string closest_match(const std::string& word,
                                           const std::vector<std::string>& candidates);
// A model given as a path (absolute, or relative to the experiment file or the working folder)
// or as a name from configs/models ("simplecnn"), or PyDTNN's other name of one (model_alias:
// "resnet50v15_imagenet" is resnet50_imagenet). `key` names what gave it in the error.
DTNN_CORE_EXPORT std::string_view model_alias(std::string_view name);
DTNN_CORE_EXPORT std::filesystem::path resolve_model_path(const std::string& model,
                                                          const std::filesystem::path& config_file,
                                                          std::string_view key = "model");

}  // namespace dtnn
