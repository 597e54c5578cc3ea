// EnergyMeter: the run's energy sources, read as one total in joules (the sum of the domains each
// source counts). output.energy chooses them: "auto" (the first CPU source that works here, rapl
// then perf, and every GPU source that works), "none", or a list of source plugins that must all
// work. The meter a run opens is installed (energy::current()) so that trace spans (joules per
// step and per layer in --profile and the trace) and best_of (objective energy or edp) read it.
#pragma once
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/energy_source.hpp"

namespace dtnn {

class Registry;

class DTNN_CORE_EXPORT EnergyMeter {
 public:
  explicit EnergyMeter(std::vector<std::shared_ptr<EnergySource>> sources);

  // The meter output.energy asks for, or null with why_none set when it asks for "auto" and no
  // source works here (or for "none"). A source named in a list that does not work is an error
  // naming key and the source's reason.
  static std::unique_ptr<EnergyMeter> open(const Registry& registry, const nlohmann::json& choice,
                                           const std::string& key, std::string& why_none);

  // Joules of the counted domains since the meter was made. Thread-safe.
  double joules();
  // Each domain's joules since the meter was made, named "source:domain". Thread-safe.
  std::vector<std::pair<std::string, double>> by_domain();
  // "rapl (/sys/class/powercap): package-0, dram-0 (counted); core-0"
  std::string describe() const;

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<EnergySource>> sources_;
  std::vector<std::vector<EnergyDomain>> domains_;
};

namespace energy {
// The run's meter (null when none): set by the experiment for the length of its run.
DTNN_CORE_EXPORT EnergyMeter* current();
DTNN_CORE_EXPORT void install(EnergyMeter* meter);
// Joules read from current(), 0 when there is none.
DTNN_CORE_EXPORT double now_joules();
}  // namespace energy

}  // namespace dtnn
