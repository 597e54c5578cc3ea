#include "dtnn/energy_meter.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>

#include "dtnn/error.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_entries.hpp"
#include "dtnn/registry.hpp"

namespace dtnn {

namespace {

std::atomic<EnergyMeter*> installed{nullptr};

}  // namespace

EnergySource::~EnergySource() = default;

EnergyMeter::EnergyMeter(std::vector<std::shared_ptr<EnergySource>> sources)
    : sources_(std::move(sources)) {
  for (const auto& s : sources_) domains_.push_back(s->domains());
}

std::unique_ptr<EnergyMeter> EnergyMeter::open(const Registry& registry,
                                               const nlohmann::json& choice, const std::string& key,
                                               std::string& why_none) {
  std::vector<std::shared_ptr<EnergySource>> sources;
  if (choice.is_string() && choice != "auto" && choice != "none")
    throw Error(key + ": expected \"auto\", \"none\" or a list of energy sources, got " +
                choice.dump() + " (a single source: [" + choice.dump() + "])");
  if (choice == "none") {
    why_none = key + " is \"none\"";
    return nullptr;
  }
  if (choice == "auto") {
    // Per kind of device covered, the first source (by traits.auto_rank) that works here.
    std::map<std::string, std::vector<std::pair<std::int64_t, std::string>>> by_cover;
    for (const std::string& name : registry.available("energy")) {
      const PluginTraits& traits = registry.find("energy", name)->traits;
      by_cover[traits.covers.value_or(name)].emplace_back(traits.auto_rank, name);
    }
    std::string reasons;
    for (auto& [cover, names] : by_cover) {
      std::sort(names.begin(), names.end());
      for (const auto& [rank, name] : names) {
        try {
          sources.push_back(registry.create_as<EnergySource>("energy", name, Params()));
          break;
        } catch (const Error& e) {
          reasons += (reasons.empty() ? "" : "; ") + name + ": " + e.what();
        }
      }
    }
    if (sources.empty()) {
      why_none = reasons.empty() ? "no energy plugin was found" : reasons;
      return nullptr;
    }
    return std::make_unique<EnergyMeter>(std::move(sources));
  }
  const std::string expected =
      "\"auto\", \"none\" or a list of energy sources (names or {\"name\": ..., parameters})";
  if (!choice.is_array()) throw Error(key + ": expected " + expected + ", got " + choice.dump());
  for (const PluginEntry& w : plugin_entries(choice, key, expected)) {
    registry.require("energy", w.name, key);
    try {
      sources.push_back(registry.create_as<EnergySource>("energy", w.name, w.params));
    } catch (const Error& e) {
      throw Error(key + ": energy source '" + w.name + "' does not work here: " + e.what());
    }
  }
  if (sources.empty()) {
    why_none = key + " lists no source";
    return nullptr;
  }
  return std::make_unique<EnergyMeter>(std::move(sources));
}

double EnergyMeter::joules() {
  std::lock_guard lock(mutex_);
  double total = 0;
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    const std::vector<double> j = sources_[s]->read();
    for (std::size_t d = 0; d < j.size() && d < domains_[s].size(); ++d)
      if (domains_[s][d].counted) total += j[d];
  }
  return total;
}

std::vector<std::pair<std::string, double>> EnergyMeter::by_domain() {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    const std::vector<double> j = sources_[s]->read();
    for (std::size_t d = 0; d < j.size() && d < domains_[s].size(); ++d)
      out.emplace_back(sources_[s]->describe() + ":" + domains_[s][d].name, j[d]);
  }
  return out;
}

std::string EnergyMeter::describe() const {
  std::string out;
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    std::string counted, other;
    for (const EnergyDomain& d : domains_[s])
      (d.counted ? counted : other) += ((d.counted ? counted : other).empty() ? "" : ", ") + d.name;
    out += (out.empty() ? "" : "; ") + sources_[s]->describe() + ": " + counted + " (counted)" +
           (other.empty() ? "" : "; not counted: " + other);
  }
  return out;
}

namespace energy {

EnergyMeter* current() { return installed.load(std::memory_order_acquire); }
void install(EnergyMeter* meter) { installed.store(meter, std::memory_order_release); }
double now_joules() {
  EnergyMeter* m = current();
  return m ? m->joules() : 0.0;
}

}  // namespace energy

}  // namespace dtnn
