// EnergySource: a reader of a machine's energy counters, for energy-aware training research (what
// PyDTNN's PMLib tracer measured): RAPL through Linux's powercap files, perf's `power` events,
// NVIDIA's NVML, and whatever a plugin brings. A source reads one or more domains (a CPU package,
// its DRAM, a GPU) as joules since it was created; dtnn::EnergyMeter (energy_meter.hpp) adds up
// the domains that make a total and serves spans, the history and best_of.
//
// A source that cannot read here (no such files, no permission, a virtual machine, no driver)
// throws dtnn::Error from its constructor saying why; the meter's "auto" then tries the next.
#pragma once
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"

namespace dtnn {

struct EnergyDomain {
  std::string name;  // "package-0", "dram-0", "core-0", "psys", "gpu-0"
  // Part of the total: a package, DRAM, a GPU. Not: a domain inside another (cores, uncore) or
  // around all of them (psys, the platform), which would count energy twice.
  bool counted = true;
};

class DTNN_CORE_EXPORT EnergySource : public Plugin {
 public:
  ~EnergySource() override;
  // What it reads, for messages: "rapl (/sys/class/powercap)".
  virtual std::string describe() const = 0;
  virtual std::vector<EnergyDomain> domains() const = 0;
  // Joules of each domain (in domains()' order) since the source was created, never decreasing
  // (a counter that wraps around is unwrapped). Called from one thread at a time.
  virtual std::vector<double> read() = 0;
};

}  // namespace dtnn
