// The core's logger: plugins report through it instead of printing. Only rank 0 writes
// (the trainer sets the rank); warnings go to stderr.
#pragma once
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

enum class LogLevel { quiet = 0, warning = 1, info = 2 };

DTNN_CORE_EXPORT void set_log_rank(int rank, int size = 1);
// "rank 2: " in a job of several ranks, "" otherwise: errors name the rank they come from.
DTNN_CORE_EXPORT std::string log_rank_prefix();
DTNN_CORE_EXPORT void set_log_level(LogLevel level);
DTNN_CORE_EXPORT void log_warning(const std::string& message);
DTNN_CORE_EXPORT void log_info(const std::string& message);
// Prints once per distinct message for the whole process (fallbacks, per-shape notes).
DTNN_CORE_EXPORT void log_info_once(const std::string& message);

}  // namespace dtnn
