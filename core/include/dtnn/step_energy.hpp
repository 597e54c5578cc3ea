// StepEnergy: the joules a run's training steps take, per epoch, over every node of the run. Each
// rank reads the installed meter (energy_meter.hpp) around its steps; ranks on one node read the
// same counters, so only each node's first rank counts, and the nodes' figures add up. A node
// whose meter does not work counts nothing, and the record says how many nodes measured.
#pragma once
#include <cstdint>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Communicator;

struct EpochEnergy {
  double joules = 0;  // the epoch's training steps, summed over the nodes that measured
  int nodes_measured = 0;
  int nodes = 1;
};

class DTNN_CORE_EXPORT StepEnergy {
 public:
  // Collective when wanted (every rank of the run takes the same `wanted`): finds each node's
  // first rank by host name.
  StepEnergy(Communicator& comm, bool wanted);

  bool wanted() const { return wanted_; }
  void begin_step();
  void end_step();
  // Collective when wanted: the epoch's figure over the nodes; starts the next epoch's.
  EpochEnergy end_epoch();

 private:
  Communicator& comm_;
  bool wanted_;
  bool counts_ = false;  // this rank is its node's first and has a meter
  int nodes_ = 1;
  double step_begin_ = 0, epoch_joules_ = 0;
};

}  // namespace dtnn
