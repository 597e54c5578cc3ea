// PyDTNN's launcher flags (spelled with - or _), each setting one experiment key: one table,
// from which `dtnn run` parses them and prints them in --help, and docs/config.md's flag table
// comes (dtnn config --flags; a test keeps the two the same).
#pragma once
#include <optional>
#include <span>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn::config {

struct Flag {
  const char* flag;  // "batch-size"
  const char* key;   // "training.batch_size"
  // The value: 's' a string, 'i' an integer, 'f' a number, 'b' true or false, 'g' true or false
  // that sets "cuda" or "cpu".
  char kind;
  const char* help;
};

DTNN_CORE_EXPORT std::span<const Flag> flags();
// The --set assignment the flag's value makes ("training.batch_size=32"), or nothing with why
// saying what was expected ("--batch-size: expected an integer, got 'abc'").
DTNN_CORE_EXPORT std::optional<std::string> flag_assignment(const Flag& flag,
                                                            const std::string& value,
                                                            std::string& why);
// docs/config.md's table of the flags.
DTNN_CORE_EXPORT std::string flags_markdown();

}  // namespace dtnn::config
