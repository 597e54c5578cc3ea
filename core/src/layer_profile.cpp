#include "dtnn/layer_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "dtnn/block_layer.hpp"
#include "dtnn/device.hpp"
#include "dtnn/layer_trace.hpp"
#include "format.hpp"

namespace dtnn::layer_profile {

namespace {

struct State {
  bool on = false;
  Device device = Device::cpu;
  std::map<std::string, Tally> kinds;       // every layer but blocks
  std::map<const Layer*, Tally> instances;  // every layer
};

void add(Tally& t, bool forward, double seconds) {
  (forward ? t.forward : t.backward) += seconds;
  ++(forward ? t.forward_calls : t.backward_calls);
}

State& state() {
  static State s;
  return s;
}

std::string kind_of(const Layer& layer, const Shape& input) {
  std::string k = layer.type() + " " + input.without_batch().str();
  if (const std::string w = layer.weights_shape(); !w.empty()) k += " w" + w;
  if (const std::string a = layer.attributes(); !a.empty()) k += " " + a;
  return k;
}

}  // namespace

void enable(bool on, Device device) { state() = State{on, device, {}, {}}; }

bool enabled() { return state().on; }

bool is_block(const Layer& layer) { return dynamic_cast<const BlockLayer*>(&layer) != nullptr; }

std::chrono::steady_clock::time_point now() {
  if (state().device != Device::cpu) device_runtime(state().device).synchronize();
  return std::chrono::steady_clock::now();
}

void record(const Layer& layer, const Shape& input, bool forward, double seconds) {
  add(state().instances[&layer], forward, seconds);
  if (!is_block(layer)) add(state().kinds[kind_of(layer, input)], forward, seconds);
}

void finish(const Layer& layer, const Shape& input, bool forward,
            std::chrono::steady_clock::time_point t0, double joules0) {
  const auto t1 = now();
  if (enabled()) record(layer, input, forward, std::chrono::duration<double>(t1 - t0).count());
  if (trace::recording()) {
    auto ns = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    };
    trace::record(forward ? trace::Phase::forward : trace::Phase::backward,
                  layer_trace::label(layer, input, forward), ns(t0), ns(t1),
                  trace::joules_now() - joules0);
  }
}

Tally of(const Layer& layer) {
  const auto it = state().instances.find(&layer);
  return it == state().instances.end() ? Tally{} : it->second;
}

std::string table(std::size_t rows) {
  const auto& kinds = state().kinds;
  std::vector<std::pair<std::string, Tally>> sorted(kinds.begin(), kinds.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.forward + a.second.backward > b.second.forward + b.second.backward;
  });
  double total = 0;
  for (const auto& [k, t] : sorted) total += t.forward + t.backward;
  auto ms = [](double s, std::int64_t calls) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4f", calls ? 1e3 * s / static_cast<double>(calls) : 0.0);
    return std::string(b);
  };
  std::vector<std::vector<std::string>> cells;
  cells.push_back(
      {"Layer kind (input, weights, geometry)", "calls", "forward ms", "backward ms", "share"});
  for (std::size_t i = 0; i < sorted.size() && i < rows; ++i) {
    const auto& [kind, t] = sorted[i];
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%",
                  total > 0 ? 100.0 * (t.forward + t.backward) / total : 0.0);
    cells.push_back({kind, std::to_string(std::max(t.forward_calls, t.backward_calls)),
                     ms(t.forward, t.forward_calls), ms(t.backward, t.backward_calls), share});
  }
  std::string out = detail::format_table(cells, {1, 2, 3, 4});
  if (sorted.size() > rows)
    out +=
        "(" + std::to_string(sorted.size() - rows) + " more kinds, " + "each below the last row)\n";
  return out;
}

}  // namespace dtnn::layer_profile
