// nvml against a fake NVML (fake_nvml.cpp: two GPUs whose counters advance 250 and 500 mJ a
// reading), and its errors where the library or the driver is missing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "dtnn/energy_meter.hpp"
#include "dtnn/registry.hpp"
#include "test_support.hpp"

using namespace dtnn;

#ifdef DTNN_FAKE_NVML
namespace {
std::shared_ptr<EnergySource> nvml(const std::string& library) {
  static const Registry registry({DTNN_TEST_PLUGIN_DIR});
  return registry.create_as<EnergySource>("energy", "nvml",
                                          Params(nlohmann::json{{"library", library}}, "test"));
}
}  // namespace

TEST_CASE("nvml reads each GPU's energy counter as joules since the source was made") {
  auto source = nvml(DTNN_FAKE_NVML);
  const std::vector<EnergyDomain> domains = source->domains();
  REQUIRE(domains.size() == 2);
  CHECK(domains[0].name == "gpu-0");
  CHECK(domains[1].name == "gpu-1");
  CHECK((domains[0].counted && domains[1].counted));
  CHECK(source->read() == std::vector<double>{0.25, 0.5});  // one reading after the first
  CHECK(source->read() == std::vector<double>{0.5, 1.0});
  EnergyMeter meter({source});
  CHECK(meter.joules() == doctest::Approx(0.75 + 1.5));
}

TEST_CASE("nvml says why it cannot read: no library, no driver") {
  CHECK(test::error_of([] {
          nvml("/nonexistent/libnvidia-ml.so.1");
        }).find("cannot open NVML (/nonexistent/libnvidia-ml.so.1)") != std::string::npos);
  setenv("DTNN_FAKE_NVML_INIT", "fail", 1);
  const std::string error = test::error_of([] { nvml(DTNN_FAKE_NVML); });
  unsetenv("DTNN_FAKE_NVML_INIT");
  CHECK(error.find("nvmlInit_v2: Driver Not Loaded (NVML error 9)") != std::string::npos);
}
#endif
