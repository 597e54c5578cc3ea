// step_cost: one rank's training step as dtnn predict needs it (dtnn/scaling_model.hpp): each of
// the model's layers' forward and backward time (a block's with its paths), its parameters, and
// the data, loss and optimizer times; measured here by running steps with the trace recording,
// or read from a run's profile (the `profile` of a history JSON, dtnn run --profile) made on
// another machine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/scaling_model.hpp"

namespace dtnn {

// Trains `steps` steps after `warmup` (best_of tunes in the warmup) on this process and times
// them; the experiment's weights change.
DTNN_CORE_EXPORT StepCost measure_step_cost(Experiment& experiment, int warmup, int steps);
// What dtnn predict takes from a run's profile (run_profile::to_json's object), checked.
struct ProfileTimes {
  struct Row {
    std::int64_t layer = 0;  // the trace's number of the layer
    std::string type;
    double forward_ms = 0, backward_ms = 0;
  };
  std::int64_t batch_size = 0;
  double data_wait_ms = 0, loss_ms = 0, optimizer_ms = 0;
  std::vector<Row> layers;
};
// The profile in `text`: a history JSON holding a "profile" (dtnn run --profile --history FILE),
// or the profile object itself. The file is trusted for nothing: each field must be there with its
// type, times finite and >= 0, batch_size >= 1, each layer number once; else an Error naming
// `where`, the field and what was expected.
DTNN_CORE_EXPORT ProfileTimes read_profile(const std::string& text, const std::string& where);

// The profile's times for this experiment's layers, numbered as the trace numbers them (one step
// is run to number them); `where` names the file in errors.
DTNN_CORE_EXPORT StepCost step_cost_from_profile(Experiment& experiment,
                                                 const ProfileTimes& profile,
                                                 const std::string& where);

}  // namespace dtnn
