// The experiment's keys, each once: its default, what it accepts beyond its default's JSON type,
// what it means, and for the keys the trainer takes as they are, the TrainerOptions field it sets
// (whose default in TrainerOptions is then the key's). experiment_defaults(),
// validate_experiment(), the trainer's options and docs/config.md's key table (dtnn config
// --markdown; a test keeps the two the same) come from this table. The objects
// "dataset", "optimizer", "conv" and "fusion" are open: their other keys are plugins' parameters
// and fusion options, checked against the plugins.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {
struct TrainerOptions;  // dtnn/trainer.hpp
}

namespace dtnn::config {

// The field of TrainerOptions a key sets: [](TrainerOptions& o) -> auto& { return o.epochs; }.
template <class T>
using TrainerFieldOf = T& (*)(TrainerOptions&);
using TrainerField =
    std::variant<std::monostate, TrainerFieldOf<std::int64_t>, TrainerFieldOf<std::uint64_t>,
                 TrainerFieldOf<int>, TrainerFieldOf<double>, TrainerFieldOf<bool>,
                 TrainerFieldOf<std::string>, TrainerFieldOf<std::vector<double>>>;

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
  const char* default_value;  // JSON text; nullptr: the trainer field's default
  Rule rule;
  const char* meaning;        // docs/config.md's text (Markdown)
  TrainerField trainer = {};  // none: the key sets no TrainerOptions field
};

DTNN_CORE_EXPORT std::span<const Key> keys();
// The key's default: its default_value, or its trainer field's in TrainerOptions{}.
DTNN_CORE_EXPORT nlohmann::json default_of(const Key& key);
// The value at a key's dotted path ("training.batch_size") in a complete experiment (every key
// of the schema there).
DTNN_CORE_EXPORT const nlohmann::json& value_at(const nlohmann::json& experiment,
                                                std::string_view path);
// Sets every field of `options` that a key of the (checked, complete) experiment `j` names.
DTNN_CORE_EXPORT void set_trainer_fields(const nlohmann::json& j, TrainerOptions& options);
// The rows of docs/config.md's key table, the open keys' rows last.
DTNN_CORE_EXPORT std::string markdown_table();

}  // namespace dtnn::config
