// layer_trace: the trace labels of layers (dtnn/trace.hpp). A layer is numbered in the order the
// trace first sees it (a model's first forward: its layers in order, a block's paths' layers after
// the block), as PyDTNN numbers its layers, and each number has PyDTNN's "Model" events: forward,
// backward, allreduce_dw, wait_dw and update_dw (value = 5 x number + 1 ... 5).
#pragma once
#include <cstdint>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"

namespace dtnn::layer_trace {

// PyDTNN's event type of the model's events and its per-layer events.
inline constexpr std::uint32_t kPydtnnModelEvents = 60000001;
enum class PydtnnEvent : std::uint32_t {
  forward = 1,
  backward = 2,
  allreduce_dw = 3,
  wait_dw = 4,
  update_dw = 5
};
inline constexpr std::uint32_t kPydtnnEventsPerLayer = 5;

DTNN_CORE_EXPORT int number(const Layer& layer);
// "003 conv2d forward", with the type, the batch's input shape, the weights, the attributes (the
// conv algorithm among them) and the flops; the same number for the same layer, shape and pass.
DTNN_CORE_EXPORT std::uint32_t label(const Layer& layer, const Shape& input, bool forward);
// A label of one of the layer's other PyDTNN events (allreduce_dw, wait_dw, update_dw), with a
// name of its own ("gradients, bucket 2 of 5").
DTNN_CORE_EXPORT std::uint32_t label(const Layer& layer, PydtnnEvent event,
                                     const std::string& name);

}  // namespace dtnn::layer_trace
