// Which machine a process runs on, as ranks compare it: a number a double holds exactly (52 bits
// of the host name's hash), which ranks allgather as float64 to learn who shares a host (GPUs
// picked by two ranks of one host; energy counters read once per host).
#pragma once
#include "dtnn/core_export.hpp"

namespace dtnn {

DTNN_CORE_EXPORT double host_key();

}  // namespace dtnn
