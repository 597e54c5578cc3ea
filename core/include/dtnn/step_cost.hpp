// step_cost: one rank's training step as dtnn predict needs it (dtnn/scaling_model.hpp): each of
// the model's layers' forward and backward time (a block's with its paths), its parameters, and
// the data, loss and optimizer times; measured here by running steps with the trace recording,
// or read from a run's profile (the `profile` of a history JSON, dtnn run --profile) made on
// another machine.
#pragma once
#include <nlohmann/json.hpp>

#include "dtnn/core_export.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/scaling_model.hpp"

namespace dtnn {

// Trains `steps` steps after `warmup` (best_of tunes in the warmup) on this process and times
// them; the experiment's weights change.
DTNN_CORE_EXPORT StepCost measure_step_cost(Experiment& experiment, int warmup, int steps);
// The times of `profile` (run_profile::to_json's object) for this experiment's layers, numbered
// as the trace numbers them (one step is run to number them); `where` names the file in errors.
DTNN_CORE_EXPORT StepCost step_cost_from_profile(Experiment& experiment,
                                                 const nlohmann::json& profile,
                                                 const std::string& where);

}  // namespace dtnn
