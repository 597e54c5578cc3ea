// PyDTNN's launcher flags, both lines' (1.x: --batch_size, 3.x: --batch-size, --no-evaluate), each
// mapped onto dtnn's experiment keys: one table, from which `dtnn run` parses them, prints them in
// --help, and docs/config.md's flag table comes (dtnn config --flags; a test keeps the two the
// same, and another parses every flag of tests/pydtnn_flags/, the lists of PyDTNN's parsers).
//
// A flag sets one key, or picks one of two values for it (--enable-gpu: device cuda or cpu), or
// sets a scheduler's parameter ("schedulers/<name>.<parameter>": the schedulers named by
// --schedulers get them), or is refused with the reason (--use-mpi-buffers: dtnn has no such
// choice), or is accepted with no effect and a note that says why (--use-cudnn, which PyDTNN
// ignores too). A flag with a gate acts only when its gate (a boolean flag) is on, as in PyDTNN:
// --augment-crop-perc needs --augment-crop.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn::config {

struct Flag {
  const char* flag;  // "batch-size" (given with - or _)
  const char* key;   // "training.batch_size"; "" for the refused and those without effect
  // The value: 's' a string, 'i' an integer, 'f' a number, 'b' true or false, 'n' true or false
  // that sets the key to its opposite, 'g' true or false that sets the key to `on` or `off`
  // (nullptr: leaves it), 'l' comma-separated names (a list), 'v' comma-separated numbers (a
  // list), 'c' comma-separated C,H,W that sets [H, W, C]; 'r' refused; '-' true or false, no
  // effect (a gate, or a choice dtnn does not have); '~' any value, no effect. A gated flag with
  // `on` takes that value when its gate is given alone.
  char kind;
  const char* help;  // what it does; for 'r' and '-', why
  const char* on = nullptr;
  const char* off = nullptr;
  const char* gate = nullptr;  // the boolean flag it needs on
};

DTNN_CORE_EXPORT std::span<const Flag> flags();
// The flag named `name` (dashes or underscores, no leading "--"), or null.
DTNN_CORE_EXPORT const Flag* find_flag(std::string_view name);
// Whether the flag takes true or false (and so may be given bare, or as --no-FLAG).
DTNN_CORE_EXPORT bool is_boolean(const Flag& flag);

// The --set assignment the flag's value makes ("training.batch_size=32"), or nothing with why
// saying what was expected ("--batch-size: expected an integer, got 'abc'"). For 'g' flags whose
// value picks nothing, an empty assignment.
DTNN_CORE_EXPORT std::optional<std::string> flag_assignment(const Flag& flag,
                                                            const std::string& value,
                                                            std::string& why);

// What a run's flags amount to, given (flag, value) in command-line order.
struct FlagSettings {
  std::vector<std::string> sets;   // --set assignments, in order
  std::vector<std::string> notes;  // flags without effect (refused values aside), and why
  std::string error;               // the first flag refused or malformed, and why ("" if none)
};
DTNN_CORE_EXPORT FlagSettings
flag_settings(const std::vector<std::pair<std::string, std::string>>& given);

// Command-line arguments with PyDTNN's boolean forms made explicit for the parser: a boolean flag
// given bare ("--evaluate") becomes "--evaluate=true" unless a true/false word follows it (1.x's
// "--evaluate True"), which it takes; "--no-evaluate" becomes "--evaluate=false".
DTNN_CORE_EXPORT std::vector<std::string> explicit_booleans(std::vector<std::string> args);

// docs/config.md's table of the flags.
DTNN_CORE_EXPORT std::string flags_markdown();

// PyDTNN 3.x's defaults (its model/base.py) that dtnn's differ from, for a run made of launcher
// flags: the note that lists those the flags left unset (`sets`, flag_settings's assignments), as
// the flag that would give 3.x's value; "" when the flags set them all. 3.x's learning-rate
// scaling is not among them: such a run follows it (optimizer.learning_rate_scaling "auto").
DTNN_CORE_EXPORT std::string pydtnn3_defaults_note(const std::vector<std::string>& sets);

// The base experiment of a run made of launcher flags, which override it: the model, and PyDTNN
// 3.x's learning-rate scaling (times the ranks unless a global batch is given).
DTNN_CORE_EXPORT nlohmann::json flag_run_base(const std::string& model);

}  // namespace dtnn::config
