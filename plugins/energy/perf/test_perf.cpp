// perf's power PMU: its sysfs description read from a tree the test writes (the events' codes,
// scales and units, the CPUs of the packages), the domains named from it, and the source's error
// where perf_event_open cannot count (the fake tree's type is no PMU's).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "dtnn/energy_source.hpp"
#include "dtnn/registry.hpp"
#include "power_events.hpp"
#include "test_support.hpp"

using namespace dtnn;
namespace fs = std::filesystem;

namespace {

fs::path power_pmu(const std::string& test) {
  const fs::path root = test::temp_dir(test);
  fs::remove_all(root);
  fs::create_directories(root / "events");
  std::ofstream(root / "type") << "4242\n";
  std::ofstream(root / "cpumask") << "0,56\n";
  auto event = [&](const std::string& name, const std::string& code) {
    std::ofstream(root / "events" / name) << code << "\n";
    std::ofstream(root / "events" / (name + ".scale")) << "2.3283064365386962890625e-10\n";
    std::ofstream(root / "events" / (name + ".unit")) << "Joules\n";
  };
  event("energy-pkg", "event=0x02");
  event("energy-ram", "event=0x03");
  event("energy-cores", "event=0x01");
  return root;
}

}  // namespace

TEST_CASE("perf's power PMU is read from its sysfs folder") {
  const fs::path root = power_pmu("perf_pmu");
  const power_events::Pmu pmu = power_events::read_pmu(root);
  CHECK(pmu.type == 4242);
  CHECK(pmu.cpus == std::vector<int>{0, 56});
  REQUIRE(pmu.events.size() == 3);
  CHECK(pmu.events[0].name == "energy-cores");
  CHECK(pmu.events[0].config == 1);
  CHECK(pmu.events[1].name == "energy-pkg");
  CHECK(pmu.events[1].config == 2);
  CHECK(pmu.events[2].config == 3);
  // 2^32 counts of 2^-32 J: one joule.
  CHECK(static_cast<double>(std::uint64_t{1} << 32) * pmu.events[1].scale == 1.0);
  CHECK(power_events::domain_name("energy-pkg", 1) == "package-1");
  CHECK(power_events::domain_name("energy-ram", 0) == "dram-0");
  CHECK(power_events::domain_name("energy-psys", 0) == "psys");
  CHECK(power_events::counted("energy-ram"));
  CHECK_FALSE(power_events::counted("energy-cores"));

  std::vector<int> cpus;
  CHECK(power_events::parse_cpus("0-2,8", cpus));
  CHECK(cpus == std::vector<int>{0, 1, 2, 8});
  CHECK_FALSE(power_events::parse_cpus("2-1", cpus));
  CHECK_FALSE(power_events::parse_cpus("", cpus));
  std::uint64_t config = 0;
  CHECK_FALSE(power_events::parse_config("event=0x02,umask=1", config));
  CHECK_FALSE(power_events::parse_config("config=2", config));
}

TEST_CASE("perf names what it cannot read or count") {
  const fs::path root = power_pmu("perf_errors");
  const Registry registry({DTNN_TEST_PLUGIN_DIR});
  auto create = [&](const fs::path& folder) {
    registry.create("energy", "perf", Params(nlohmann::json{{"pmu", folder.string()}}, "test"));
  };
  std::string error = test::error_of([&] { create(root); });
  CAPTURE(error);
  CHECK(error.find("perf_event_open(energy-cores, type 4242, cpu 0)") != std::string::npos);
  CHECK(test::error_of([&] { create(root / "none"); }).find("no perf power PMU at") !=
        std::string::npos);
  std::ofstream(root / "events" / "energy-pkg.unit", std::ios::trunc) << "Watts\n";
  error = test::error_of([&] { create(root); });
  CHECK(error.find("energy-pkg.unit: expected \"Joules\"") != std::string::npos);
}
