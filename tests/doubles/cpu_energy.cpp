// Test double for energy measurement: a "meter" whose joules are the process's CPU time times
// DTNN_TEST_WATTS (default 10 W), in one counted domain. Deterministic enough to check the
// arithmetic of the history, the profile and best_of's energy objective on a machine without
// energy counters: a sleeping algorithm spends time but no CPU, a spinning one spends both.
#include <ctime>

#include "dtnn/energy_source.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
using namespace dtnn;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

class CpuEnergy final : public EnergySource {
 public:
  explicit CpuEnergy(const Params& p) : watts_(p.get_double("watts")), start_(cpu_seconds()) {}
  std::string describe() const override { return "test_cpu_energy (CPU time x watts)"; }
  std::vector<EnergyDomain> domains() const override { return {{"cpu-time", true}}; }
  std::vector<double> read() override { return {(cpu_seconds() - start_) * watts_}; }

 private:
  double watts_, start_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CpuEnergy(p); }
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "energy", .name = "test_cpu_energy",
                   .description = "test double: the process's CPU time times watts",
                   .parameters = R"({"watts": 10.0})", .factory = create)
