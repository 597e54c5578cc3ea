// What PyDTNN's tracers call an event of dtnn's trace: its type and value (PyDTNN's "Model" type
// for a layer's events, dtnn's phase type for the rest) and the value's name, as PyDTNN's tracer
// names it ("003_conv2d_forward") or the phase's name. Shared by the CSV and Paraver writers.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "dtnn/layer_trace.hpp"
#include "dtnn/trace_files.hpp"

namespace dtnn::trace::pydtnn {

struct Key {
  std::uint32_t type = 0, value = 0;
  bool operator<(const Key& o) const { return type != o.type ? type < o.type : value < o.value; }
};

inline Key key_of(const Label& label, Phase phase) {
  if (label.pydtnn_type != 0) return {label.pydtnn_type, label.pydtnn_value};
  return {kDtnnPhaseEvents, static_cast<std::uint32_t>(phase) + 1};
}

inline std::string type_name(std::uint32_t type) {
  return type == layer_trace::kPydtnnModelEvents ? "Model" : "dtnn phase";
}

inline std::string value_name(const Label& label, Phase phase) {
  if (label.pydtnn_type != layer_trace::kPydtnnModelEvents) return to_string(phase);
  static const char* const kEvents[] = {"forward", "backward", "allreduce_dw", "wait_dw",
                                        "update_dw"};
  const std::uint32_t v = label.pydtnn_value - 1;
  const nlohmann::json args = nlohmann::json::parse(label.args, nullptr, false);
  const std::string type =
      args.is_object() && args.contains("type") ? args["type"].get<std::string>() : "layer";
  char number[16];
  std::snprintf(number, sizeof number, "%03u", v / layer_trace::kPydtnnEventsPerLayer);
  return std::string(number) + "_" + type + "_" + kEvents[v % layer_trace::kPydtnnEventsPerLayer];
}

}  // namespace dtnn::trace::pydtnn
