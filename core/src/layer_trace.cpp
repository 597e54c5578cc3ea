#include "dtnn/layer_trace.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <tuple>

#include "dtnn/layer_profile.hpp"
#include "dtnn/trace.hpp"

namespace dtnn::layer_trace {

namespace {

struct Cached {
  Shape input;
  std::uint32_t label = 0;
};

// Numbers and the last label of each layer and pass, for one trace generation.
struct State {
  std::mutex mutex;
  std::uint64_t generation = ~std::uint64_t{0};
  std::map<const Layer*, int> numbers;
  std::map<std::pair<const Layer*, bool>, Cached> last;
};

State& state() {
  static State s;
  return s;
}

// Under the state's lock: the layer's number, the state emptied first in a new generation.
int number_locked(State& s, const Layer& layer) {
  const std::uint64_t g = trace::generation();
  if (g != s.generation) {
    s.generation = g;
    s.numbers.clear();
    s.last.clear();
  }
  return s.numbers.try_emplace(&layer, static_cast<int>(s.numbers.size())).first->second;
}

std::string padded(int n) {
  char b[16];
  std::snprintf(b, sizeof b, "%03d", n);
  return b;
}

std::uint32_t pydtnn_value(int number, PydtnnEvent e) {
  return static_cast<std::uint32_t>(number) * kPydtnnEventsPerLayer + static_cast<std::uint32_t>(e);
}

}  // namespace

int number(const Layer& layer) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return number_locked(s, layer);
}

std::uint32_t label(const Layer& layer, const Shape& input, bool forward) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const int n = number_locked(s, layer);
  Cached& c = s.last[{&layer, forward}];
  if (c.label != 0 && c.input == input) return c.label;
  trace::Label l;
  l.name = padded(n) + " " + layer.type() + (forward ? " forward" : " backward");
  nlohmann::json args = {{"layer", n}, {"type", layer.type()}, {"input", input.str()}};
  if (const std::string w = layer.weights_shape(); !w.empty()) args["weights"] = w;
  if (const std::string a = layer.attributes(); !a.empty()) args["attributes"] = a;
  if (layer_profile::is_block(layer)) args["block"] = true;  // its time includes its paths'

  const double flops = layer.forward_flops(input.rank() > 0 ? input[0] : 1);
  l.flops = forward ? flops : 2 * flops;
  l.args = args.dump();
  l.pydtnn_type = kPydtnnModelEvents;
  l.pydtnn_value = pydtnn_value(n, forward ? PydtnnEvent::forward : PydtnnEvent::backward);
  c = {input, trace::intern(l)};
  return c.label;
}

std::uint32_t label(const Layer& layer, PydtnnEvent event, const std::string& name) {
  trace::Label l;
  l.name = name;
  l.pydtnn_type = kPydtnnModelEvents;
  const int n = number(layer);
  l.pydtnn_value = pydtnn_value(n, event);
  l.args = nlohmann::json{{"layer", n}, {"type", layer.type()}}.dump();
  return trace::intern(l);
}

}  // namespace dtnn::layer_trace
