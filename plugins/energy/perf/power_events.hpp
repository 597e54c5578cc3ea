// The `power` PMU of Linux's perf, as its sysfs folder describes it
// (/sys/bus/event_source/devices/power): type, cpumask (one CPU per package) and events/energy-*
// with their .scale (joules per count) and .unit. Read here; counted by perf_event_open in
// perf.cpp.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sysfs_file.hpp"

namespace dtnn::power_events {

struct Event {
  std::string name;          // "energy-pkg"
  std::uint64_t config = 0;  // the event code
  double scale = 0;          // joules per count
};

struct Pmu {
  std::uint32_t type = 0;
  std::vector<int> cpus;  // a CPU of each package
  std::vector<Event> events;
};

// "event=0x02" (perf's format for the power PMU's events) -> 2; false for anything else.
inline bool parse_config(const std::string& text, std::uint64_t& config) {
  const std::string prefix = "event=";
  if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size()) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str() + prefix.size(), &end, 0);
  if (errno != 0 || end == nullptr || *end != '\0') return false;
  config = v;
  return true;
}

// "0,56" or "0-1,4": the CPUs listed.
inline bool parse_cpus(const std::string& text, std::vector<int>& cpus) {
  cpus.clear();
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t next = text.find(',', at);
    if (next == std::string::npos) next = text.size();
    const std::string part = text.substr(at, next - at);
    const std::size_t dash = part.find('-');
    std::uint64_t first = 0, last = 0;
    if (!energy_files::parse_unsigned(part.substr(0, dash), first)) return false;
    last = first;
    if (dash != std::string::npos && !energy_files::parse_unsigned(part.substr(dash + 1), last))
      return false;
    if (last < first || last > 65535) return false;
    for (std::uint64_t c = first; c <= last; ++c) cpus.push_back(static_cast<int>(c));
    at = next + 1;
  }
  return !cpus.empty();
}

// The PMU described under folder; throws dtnn::Error naming the file that is missing or wrong.
inline Pmu read_pmu(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw Error("no perf power PMU at " + folder.string() +
                " (a virtual machine, or a kernel or CPU without RAPL events)");
  Pmu pmu;
  std::uint64_t type = 0;
  if (!energy_files::parse_unsigned(energy_files::read_text(folder / "type"), type) ||
      type > UINT32_MAX)
    throw Error((folder / "type").string() + ": expected the PMU's type number");
  pmu.type = static_cast<std::uint32_t>(type);
  if (!parse_cpus(energy_files::read_text(folder / "cpumask"), pmu.cpus))
    throw Error((folder / "cpumask").string() + ": expected a list of CPUs (\"0,56\")");
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(folder / "events", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("energy-", 0) == 0 && name.find('.') == std::string::npos)
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    Event e;
    e.name = file.filename().string();
    if (!parse_config(energy_files::read_text(file), e.config))
      throw Error(file.string() + ": expected \"event=0x..\"");
    const fs::path scale = file.string() + ".scale", unit = file.string() + ".unit";
    char* end = nullptr;
    const std::string scale_text = energy_files::read_text(scale);
    e.scale = std::strtod(scale_text.c_str(), &end);
    if (end == scale_text.c_str() || *end != '\0' || !(e.scale > 0) || e.scale > 1)
      throw Error(scale.string() + ": expected joules per count (a number in (0, 1])");
    if (energy_files::read_text(unit) != "Joules")
      throw Error(unit.string() + ": expected \"Joules\"");
    pmu.events.push_back(e);
  }
  if (pmu.events.empty()) throw Error("no energy-* event in " + (folder / "events").string());
  return pmu;
}

// The domain an event measures on the package-th package: energy-pkg -> package-0,
// energy-ram -> dram-0, energy-cores -> cores-0; energy-psys (the platform) -> psys.
inline std::string domain_name(const std::string& event, std::size_t package) {
  std::string what = event.substr(std::string("energy-").size());
  if (what == "psys") return what;
  if (what == "pkg") what = "package";
  if (what == "ram") what = "dram";
  return what + "-" + std::to_string(package);
}

inline bool counted(const std::string& event) {
  return event == "energy-pkg" || event == "energy-ram";
}

}  // namespace dtnn::power_events
