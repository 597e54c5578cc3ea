// Conformance of a plugin of any kind, found by discovery: what `dtnn check-plugin FILE` runs and
// what tests/test_conformance.cpp runs over every plugin the registry finds. Each kind has its
// generic driver (the kind's contracts, which every plugin of it must keep); a plugin declares the
// settings to check it at in its traits ("conformance": [case, ...], the shape of a case is the
// kind's, below), or is checked at its kind's default case.
//
//   layer      {"params": {...}, "input": [H, W, C] or [features] or [T, D], "batch": n,
//               "tokens": V (inputs are token ids below V, not perturbed; dx must be zero)}
//              float64 finite-difference gradient check of dx and every parameter gradient in
//              NHWC and NCHW; backward overwrites a dx pre-filled with NaN; parameter gradients
//              that start non-zero accumulate; a partial batch (evaluation) gives the full batch's
//              first rows and writes nothing past its output.
//   optimizer  {"params": {...}}
//              an update consumes the gradient (zero afterwards) and descends from zero state;
//              parameters updated in any order end alike; the state round-trips: copied into a
//              fresh optimizer, both continue bit for bit; set_learning_rate is read back.
//   metric     {"params": {...}, "classes": m, "labels": "one_hot" or "ids"}
//              totals add: a batch's equal its halves'; the value is finite; a row rule stays
//              inside its totals and its slots.
//   loss       {"params": {...}, "classes": m, "labels": "one_hot" or "ids" (a class id per
//               row, one row ignored, log-probabilities as the predictions)}
//              the gradient against finite differences of the loss; a combined softmax gradient
//              against the softmax's Jacobian applied to the plain one.
//   conv       {"params": {...}} (one per engine the plugin can be forced onto)
//              the geometry sweep of conv_conformance.hpp against `reference`, guard zones.
//   dataset    {"params": {...}} (a plugin that needs files names them here)
//              a sample shape, classes and a training split; two instances agree on them and
//              read the same bytes; a sample read twice in a batch is the same; one-hot labels
//              (or class ids in range per position), finite samples; nothing written past the
//              batch, in both layouts.
//   codec      {"params": {...}, "n": [sizes]}
//              the payload's size depends on n alone; encoding is a function of the values and
//              writes nothing past the payload; a round trip keeps the codec's declared
//              contraction; decode_add adds, scaled; with error feedback (CodedAllreduce) what was
//              sent plus the residual is the gradients' sum, and restored residuals continue bit
//              for bit.
//   scheduler  {"params": {...}, "epochs": n}
//              driven as the trainer drives it (batches, epochs of logs that fall, stall and
//              rise) on an sgd optimizer: a scheduler restored from state() (and the learning rate)
//              after a few epochs decides every later epoch as the one never stopped (learning
//              rate, stop, checkpoints asked for); its state holds no NaN.
// Communicators are checked on every rank of a running job instead (check_communicator):
// allgather by rank, allreduce_sum in both dtypes, iallreduce_sum then wait, broadcast from the
// last rank, barrier. Other kinds are checked to load only.
#pragma once
#include <string>
#include <vector>

#include "dtnn/registry.hpp"

namespace dtnn {
class Communicator;
}

namespace dtnn::testing {

struct Check {
  std::string what;       // the property: "gradient check: dx", "contract: dx overwritten", ...
  std::string setting;    // where: the case's parameters, input, layout, dtype (printed on failure)
  bool supported = true;  // false: the plugin declines the setting (a conv geometry); not a failure
  bool passed = true;
  std::string detail;  // the measured error against its tolerance, or the error message
};

// The conformance cases record declares (traits.conformance), else its kind's default, and one
// for each of its traits.fixtures (a dataset's files, written here: dataset_fixtures.hpp): JSON
// text of a list of case objects.
std::string conformance_cases(const PluginRecord& record);

// Every check of record's plugin over its cases (an Error in a case is a failed check naming it).
// A plugin that declares no case ("conformance": [], a dataset that reads files) is checked at
// the cases the caller gives (a test that writes such files); with none, at nothing.
std::vector<Check> check_plugin(const Registry& registry, const PluginRecord& record);
std::vector<Check> check_plugin(const Registry& registry, const PluginRecord& record,
                                const std::string& cases_json);

// The drivers, one case each (the case's JSON as above).
std::vector<Check> check_layer(const Registry& registry, const PluginRecord& record,
                               const std::string& case_json);
std::vector<Check> check_optimizer(const Registry& registry, const PluginRecord& record,
                                   const std::string& case_json);
std::vector<Check> check_metric(const Registry& registry, const PluginRecord& record,
                                const std::string& case_json);
std::vector<Check> check_loss(const Registry& registry, const PluginRecord& record,
                              const std::string& case_json);
std::vector<Check> check_conv(const Registry& registry, const PluginRecord& record,
                              const std::string& case_json);
std::vector<Check> check_dataset(const Registry& registry, const PluginRecord& record,
                                 const std::string& case_json);
std::vector<Check> check_scheduler(const Registry& registry, const PluginRecord& record,
                                   const std::string& case_json);
std::vector<Check> check_codec(const Registry& registry, const PluginRecord& record,
                               const std::string& case_json);
std::vector<Check> check_communicator(Communicator& comm);

}  // namespace dtnn::testing
