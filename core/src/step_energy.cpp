#include "dtnn/step_energy.hpp"

#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/energy_meter.hpp"
#include "dtnn/hosts.hpp"

namespace dtnn {

StepEnergy::StepEnergy(Communicator& comm, bool wanted) : comm_(comm), wanted_(wanted) {
  if (!wanted_) return;
  const int ranks = comm_.size(), me = comm_.rank();
  std::vector<double> hosts(static_cast<std::size_t>(ranks), 0.0);
  const double mine = host_key();
  if (ranks > 1)
    comm_.allgather(&mine, hosts.data(), 1, DType::float64, "energy: host names");
  else
    hosts[0] = mine;
  bool first_on_host = true;
  nodes_ = 0;
  for (int r = 0; r < ranks; ++r) {
    bool first = true;
    for (int q = 0; q < r; ++q)
      first = first && hosts[static_cast<std::size_t>(q)] != hosts[static_cast<std::size_t>(r)];
    nodes_ += first;
    if (r == me) first_on_host = first;
  }
  counts_ = first_on_host && energy::current() != nullptr;
}

void StepEnergy::begin_step() {
  if (counts_) step_begin_ = energy::now_joules();
}

void StepEnergy::end_step() {
  if (counts_) epoch_joules_ += energy::now_joules() - step_begin_;
}

EpochEnergy StepEnergy::end_epoch() {
  EpochEnergy e;
  if (!wanted_) return e;
  double sums[2] = {counts_ ? epoch_joules_ : 0.0, counts_ ? 1.0 : 0.0};
  if (comm_.size() > 1) comm_.allreduce_sum(sums, 2, DType::float64, "energy of the epoch");
  epoch_joules_ = 0;
  e.joules = sums[0];
  e.nodes_measured = static_cast<int>(sums[1]);
  e.nodes = nodes_;
  return e;
}

}  // namespace dtnn
