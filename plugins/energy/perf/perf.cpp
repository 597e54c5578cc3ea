// perf: energy from the `power` PMU of Linux's perf (the same RAPL counters as rapl, through
// perf_event_open: where powercap's files are missing or unreadable but perf may count). One
// counter per energy event and package (on the CPU the PMU's cpumask names for it); a count times
// the event's scale is joules; the counters are 64-bit and do not wrap.
//   parameter pmu: the PMU's sysfs folder (tests give a tree they write).
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dtnn/energy_source.hpp"
#include "dtnn/error.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_api.hpp"
#include "power_events.hpp"

namespace {

using namespace dtnn;

struct Counter {
  EnergyDomain domain;
  int fd = -1;
  double scale = 0;
  std::uint64_t first = 0;
};

class Perf final : public EnergySource {
 public:
  explicit Perf(const Params& p) : folder_(p.get_string("pmu")) {
    const power_events::Pmu pmu = power_events::read_pmu(folder_);
    try {
      for (const power_events::Event& e : pmu.events)
        for (std::size_t package = 0; package < pmu.cpus.size(); ++package) {
          if (e.name == "energy-psys" && package > 0) continue;  // one platform
          Counter c{{power_events::domain_name(e.name, package), power_events::counted(e.name)},
                    open_counter(pmu.type, e, pmu.cpus[package]),
                    e.scale};
          counters_.push_back(c);
          counters_.back().first = count(counters_.back());
        }
    } catch (...) {
      close_all();
      throw;
    }
  }
  ~Perf() override { close_all(); }

  std::string describe() const override { return "perf (" + folder_ + ")"; }

  std::vector<EnergyDomain> domains() const override {
    std::vector<EnergyDomain> out;
    for (const Counter& c : counters_) out.push_back(c.domain);
    return out;
  }

  std::vector<double> read() override {
    std::vector<double> joules;
    for (const Counter& c : counters_)
      joules.push_back(static_cast<double>(count(c) - c.first) * c.scale);
    return joules;
  }

 private:
  static int open_counter(std::uint32_t type, const power_events::Event& e, int cpu) {
    perf_event_attr attr{};
    attr.type = type;
    attr.size = sizeof attr;
    attr.config = e.config;
    const long fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      throw Error("perf_event_open(" + e.name + ", type " + std::to_string(type) + ", cpu " +
                  std::to_string(cpu) + "): " + std::strerror(error) +
                  (error == EACCES || error == EPERM
                       ? " (needs root, CAP_PERFMON or kernel.perf_event_paranoid <= 0)"
                       : ""));
    }
    return static_cast<int>(fd);
  }

  std::uint64_t count(const Counter& c) const {
    std::uint64_t value = 0;
    if (::read(c.fd, &value, sizeof value) != static_cast<ssize_t>(sizeof value))
      throw Error("perf: cannot read the " + c.domain.name + " counter: " + std::strerror(errno));
    return value;
  }

  void close_all() {
    for (Counter& c : counters_)
      if (c.fd >= 0) ::close(std::exchange(c.fd, -1));
  }

  std::string folder_;
  std::vector<Counter> counters_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Perf(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "energy", .name = "perf",
                   .description = "CPU package and DRAM energy from perf's power events (RAPL)",
                   .parameters = R"({"pmu": "/sys/bus/event_source/devices/power"})",
                   .traits = R"({"covers": "cpu", "auto_rank": 1})", .factory = create)
