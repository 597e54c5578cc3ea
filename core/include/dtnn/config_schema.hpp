// The experiment's keys, each once: its default, what it accepts beyond its default's JSON type,
// and what it means. experiment_defaults(), validate_experiment() and docs/config.md's key table
// (dtnn config --markdown; a test keeps the two the same) come from this table. The objects
// "dataset", "optimizer", "conv" and "fusion" are open: their other keys are plugins' parameters
// and fusion options, checked against the plugins.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn::config {

// What a key accepts beyond its default's JSON type: a predicate, or one of a few strings
// ("stop|skip_batch|ignore"); expected says it in errors ("a positive integer").
struct DTNN_CORE_EXPORT Rule {
  bool (*accepts)(const nlohmann::json& value) = nullptr;
  const char* expected = nullptr;
  const char* choices = nullptr;
  bool allows(const nlohmann::json& value) const;
};

struct Key {
  const char* path;           // "training.batch_size"
  const char* default_value;  // JSON text
  Rule rule;
  const char* meaning;  // docs/config.md's text (Markdown)
};

DTNN_CORE_EXPORT std::span<const Key> keys();
// The rows of docs/config.md's key table, the open keys' rows last.
DTNN_CORE_EXPORT std::string markdown_table();

}  // namespace dtnn::config
