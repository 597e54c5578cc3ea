// SIGINT and SIGTERM as a request to stop training at the next batch boundary (the trainer then
// writes a checkpoint when a checkpoint folder is set, and the history, and the process exits
// non-zero saying so). A second signal of either kind ends the process at once, as usual.
#pragma once
#include "dtnn/core_export.hpp"

namespace dtnn {

// Installs the handlers (idempotent). The trainer calls it when training starts.
DTNN_CORE_EXPORT void install_stop_handlers();
// The signal that asked to stop (SIGINT or SIGTERM), or 0.
DTNN_CORE_EXPORT int stop_requested();
// Forgets a request (tests; a new training in the same process).
DTNN_CORE_EXPORT void clear_stop_request();

}  // namespace dtnn
