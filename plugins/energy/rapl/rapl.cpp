// rapl: the CPU's Running Average Power Limit energy counters through Linux's powercap files,
// /sys/class/powercap/<control>-rapl:<package>[:<subzone>]/ with name, energy_uj and
// max_energy_range_uj. Intel's and AMD's (Zen) drivers both appear as intel-rapl. A package zone
// (package-N) holds its cores (core) and uncore (uncore); DRAM (dram) is a subzone beside them but
// not inside the package's count; psys (the platform) holds all. The total counts packages and
// DRAM. The mmio control type repeats the package and is left out.
//   parameter powercap: the folder to read (tests give a tree they write).
#include <algorithm>
#include <regex>

#include "dtnn/energy_source.hpp"
#include "dtnn/error.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_api.hpp"
#include "sysfs_file.hpp"

namespace {

using namespace dtnn;
namespace fs = std::filesystem;

struct Zone {
  EnergyDomain domain;
  energy_files::CounterFile counter;
  energy_files::Unwrapped joules_uj;
};

class Rapl final : public EnergySource {
 public:
  explicit Rapl(const Params& p) : root_(p.get_string("powercap")) {
    static const std::regex zone_name(R"(([a-z-]*rapl):([0-9]+)(:([0-9]+))?)");
    std::vector<fs::path> folders;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(root_, ec)) {
      const std::string name = e.path().filename().string();
      if (name.find("mmio") == std::string::npos && std::regex_match(name, zone_name))
        folders.push_back(e.path());
    }
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw Error("cannot list " + root_.string() + ": " + ec.message());
    if (folders.empty())
      throw Error("no RAPL zone under " + root_.string() +
                  " (no intel-rapl:N folder: a virtual machine, or a kernel without powercap's "
                  "RAPL driver)");
    std::sort(folders.begin(), folders.end());
    for (const fs::path& folder : folders) {
      std::smatch m;
      const std::string name = folder.filename().string();
      std::regex_match(name, m, zone_name);
      std::string domain = energy_files::read_text(folder / "name");
      const bool subzone = m[4].matched;
      // Subzones are named without their package ("dram"): add it, so that names are unique.
      if (subzone) domain += "-" + m[2].str();
      const bool counted = domain.rfind("package", 0) == 0 || domain.rfind("dram", 0) == 0;
      std::uint64_t range = 0;
      if (!energy_files::parse_unsigned(energy_files::read_text(folder / "max_energy_range_uj"),
                                        range))
        throw Error((folder / "max_energy_range_uj").string() +
                    ": expected the counter's range in microjoules");
      energy_files::CounterFile counter(folder / "energy_uj");
      const std::uint64_t first = counter.read();
      zones_.push_back({{domain, counted}, std::move(counter), {first, range}});
    }
  }

  std::string describe() const override { return "rapl (" + root_.string() + ")"; }

  std::vector<EnergyDomain> domains() const override {
    std::vector<EnergyDomain> out;
    for (const Zone& z : zones_) out.push_back(z.domain);
    return out;
  }

  std::vector<double> read() override {
    std::vector<double> joules;
    for (Zone& z : zones_) joules.push_back(z.joules_uj.advance(z.counter.read()) * 1e-6);
    return joules;
  }

 private:
  fs::path root_;
  std::vector<Zone> zones_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Rapl(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "energy", .name = "rapl",
                   .description = "CPU package and DRAM energy from RAPL counters (powercap files)",
                   .parameters = R"({"powercap": "/sys/class/powercap"})",
                   .traits = R"({"covers": "cpu", "auto_rank": 0})", .factory = create)
