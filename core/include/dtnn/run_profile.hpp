// run_profile: the profile of a run (dtnn run --profile), from its trace recording
// (dtnn/trace.hpp): a row per layer, the layers in blocks included (numbered as the trace numbers
// them), with forward and backward ms per call, the share of the training steps' time, GFLOP/s
// and the attributes (the conv algorithm among them); then where else a step's time went:
// waiting for data, the loss, the optimizer, waiting for the gradients' communication, the
// ranks' bookkeeping collectives. With an energy meter (energy_measured): millijoules per call of
// each layer and joules per step, from the spans' joules (the meter's advance over each span:
// the whole package's, whatever else runs on it).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "dtnn/core_export.hpp"
#include "dtnn/trace.hpp"

namespace dtnn::run_profile {

DTNN_CORE_EXPORT nlohmann::json to_json(const trace::Recorded& recorded,
                                        bool energy_measured = false);
// The table and the lines after it, from to_json's object.
DTNN_CORE_EXPORT std::string table(const nlohmann::json& profile);

}  // namespace dtnn::run_profile
