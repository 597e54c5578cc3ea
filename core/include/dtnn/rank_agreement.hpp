// What every rank of a data-parallel run must agree on, checked when the run starts: ranks that
// run different experiments (a batch size, a model, a dataset size) would otherwise meet in
// collectives of different sizes, which crash inside MPI or wait until the timeout.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Communicator;

// Named values, e.g. {"training.batch_size", "64"}.
using RankFacts = std::vector<std::pair<std::string, std::string>>;

// The experiment's keys as facts: every leaf of the validated config, dotted, except those that
// may differ per rank (training.threads, output.*, and paths, whose contents are compared through
// what they hold: the dataset's sizes, the resumed position).
DTNN_CORE_EXPORT RankFacts experiment_facts(const nlohmann::json& config);

// One allgather of a digest when the ranks agree. Otherwise an Error that names each fact that
// differs, the ranks on which it differs from rank 0, and this rank's value; `what` prefixes it.
// Every rank must call it with facts in the same order of names (the same code path).
DTNN_CORE_EXPORT void check_ranks_agree(Communicator& comm, const RankFacts& facts,
                                        const std::string& what);

}  // namespace dtnn
