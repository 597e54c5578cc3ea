// rapl on a powercap tree the test writes (Intel's layout: a package with core and dram subzones,
// psys beside it, the mmio copy of the package), and the meter's total over it.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "dtnn/energy_meter.hpp"
#include "dtnn/registry.hpp"
#include "test_support.hpp"

using namespace dtnn;
namespace fs = std::filesystem;

namespace {

void zone(const fs::path& folder, const std::string& name, std::uint64_t uj,
          std::uint64_t range = 262143328850) {
  fs::create_directories(folder);
  std::ofstream(folder / "name") << name << "\n";
  std::ofstream(folder / "energy_uj") << uj << "\n";
  std::ofstream(folder / "max_energy_range_uj") << range << "\n";
}

// Rewrites a counter in place (the source keeps the file open, as it keeps sysfs's).
void set_counter(const fs::path& folder, std::uint64_t uj) {
  std::ofstream(folder / "energy_uj", std::ios::trunc) << uj << "\n";
}

fs::path intel_tree(const std::string& test) {
  const fs::path root = test::temp_dir(test);
  fs::remove_all(root);
  fs::create_directories(root / "intel-rapl");  // the control type's folder: no counter
  zone(root / "intel-rapl:0", "package-0", 1000000, 10000000);
  zone(root / "intel-rapl:0:0", "core", 500000);
  zone(root / "intel-rapl:0:1", "dram", 200000);
  zone(root / "intel-rapl:1", "psys", 9000000);
  zone(root / "intel-rapl-mmio:0", "package-0", 1000000);
  return root;
}

const Registry& registry() {
  static const Registry r({DTNN_TEST_PLUGIN_DIR});
  return r;
}

std::shared_ptr<EnergySource> rapl(const fs::path& root) {
  return registry().create_as<EnergySource>(
      "energy", "rapl", Params(nlohmann::json{{"powercap", root.string()}}, "test"));
}

}  // namespace

TEST_CASE("rapl reads each zone of a powercap tree as joules, counting packages and DRAM") {
  const fs::path root = intel_tree("rapl_zones");
  auto source = rapl(root);
  const std::vector<EnergyDomain> domains = source->domains();
  REQUIRE(domains.size() == 4);  // the mmio copy left out
  CHECK(domains[0].name == "package-0");
  CHECK(domains[1].name == "core-0");
  CHECK(domains[2].name == "dram-0");
  CHECK(domains[3].name == "psys");
  CHECK(domains[0].counted);
  CHECK_FALSE(domains[1].counted);
  CHECK(domains[2].counted);
  CHECK_FALSE(domains[3].counted);
  CHECK(source->read() == std::vector<double>{0, 0, 0, 0});

  set_counter(root / "intel-rapl:0", 3500000);
  set_counter(root / "intel-rapl:0:0", 1500000);
  set_counter(root / "intel-rapl:0:1", 1200000);
  std::vector<double> j = source->read();
  CHECK(j[0] == doctest::Approx(2.5));
  CHECK(j[1] == doctest::Approx(1.0));
  CHECK(j[2] == doctest::Approx(1.0));
  CHECK(j[3] == 0);

  SUBCASE("a counter that wraps around is unwrapped") {
    set_counter(root / "intel-rapl:0", 9500000);  // +6 J
    source->read();
    set_counter(root / "intel-rapl:0", 500000);  // past the range of 10 J: +1.000001 J
    j = source->read();
    CHECK(j[0] == doctest::Approx(2.5 + 6.0 + 1.000001));
  }
  SUBCASE("the meter's total adds the package and DRAM, not their parts or the platform") {
    EnergyMeter meter({rapl(root)});
    set_counter(root / "intel-rapl:0", 5500000);    // +2 J
    set_counter(root / "intel-rapl:0:0", 3500000);  // +2 J, inside the package
    set_counter(root / "intel-rapl:0:1", 1700000);  // +0.5 J
    set_counter(root / "intel-rapl:1", 19000000);   // +10 J around everything
    CHECK(meter.joules() == doctest::Approx(2.5));
    CHECK(meter.describe().find("package-0, dram-0 (counted); not counted: core-0, psys") !=
          std::string::npos);
  }
}

TEST_CASE("rapl says why it cannot read: no zones, a counter that is not a number") {
  const fs::path empty = test::temp_dir("rapl_none");
  fs::create_directories(empty);
  std::string error = test::error_of([&] { rapl(empty / "missing"); });
  CHECK(error.find("no RAPL zone under") != std::string::npos);
  CHECK(error.find("missing") != std::string::npos);

  const fs::path root = intel_tree("rapl_bad");
  set_counter(root / "intel-rapl:0:1", 0);
  std::ofstream(root / "intel-rapl:0:1" / "energy_uj", std::ios::trunc) << "n/a\n";
  error = test::error_of([&] { rapl(root); });
  CAPTURE(error);
  CHECK(error.find("intel-rapl:0:1/energy_uj: expected a counter") != std::string::npos);
}

TEST_CASE("output.energy: a listed source that does not work is an error naming the key") {
  std::string why;
  const std::string error = test::error_of([&] {
    EnergyMeter::open(registry(), nlohmann::json{{{"name", "rapl"}, {"powercap", "/nonexistent"}}},
                      "exp.json: output.energy", why);
  });
  CHECK(error.find("exp.json: output.energy: energy source 'rapl' does not work here: no RAPL "
                   "zone under /nonexistent") != std::string::npos);
  CHECK(test::error_of([&] {
          EnergyMeter::open(registry(), nlohmann::json(3), "exp.json: output.energy", why);
        }).find("exp.json: output.energy: expected \"auto\", \"none\" or a list") !=
        std::string::npos);
  CHECK(EnergyMeter::open(registry(), "none", "exp.json: output.energy", why) == nullptr);
  // "auto" takes what works here, or says for each source why not.
  why.clear();
  auto meter = EnergyMeter::open(registry(), "auto", "exp.json: output.energy", why);
  if (meter) {
    CHECK(why.empty());
  } else {
    CAPTURE(why);
    CHECK(why.find("rapl: ") != std::string::npos);
    CHECK(why.find("perf: ") != std::string::npos);
    CHECK(why.find("nvml: ") != std::string::npos);
  }
}
