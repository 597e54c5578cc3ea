// GradientBuffers: the dLoss/d(activation) buffers of a model's layer chains, one set per nesting
// level. Backward runs one chain of a level at a time (a block's paths one after another, then
// the chain around it goes on), so every chain of a level can share the same buffers: the memory
// grows with how deep blocks nest, not with how many there are. A chain built for level L ping-
// pongs between (L, ping) and (L, pong); a block whose paths are chains of level L keeps its
// paths' summed input gradient in (L, scratch) and a path's share of dy in (L, share). A nested
// block's paths are chains of level L + 1 (LayerChain builds its layers one level deeper).
#pragma once
#include <cstdint>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT GradientBuffers {
 public:
  enum class Slot : std::uint8_t {
    ping = 0,
    pong = 1,
    scratch = 2,
    share = 3,
    forward_a = 4,
    forward_b = 5
  };
  static constexpr std::size_t kSlots = 6;

  // The buffer (level, slot) grows to hold at least numel values (allocation happens here, at
  // build time; every user of the level asks before the first pass). All buffers share dtype and
  // device.
  void reserve(int level, Slot slot, std::int64_t numel, DType dtype, Device device);
  // The first shape.numel() values of buffer (level, slot), tagged with layout.
  Tensor view(int level, Slot slot, const Shape& shape, Layout layout) const;
  // Bytes of the gradient buffers (the summary's activation gradients), and of the forward ones.
  std::size_t bytes() const;
  std::size_t forward_bytes() const;

 private:
  static std::size_t index(int level, Slot slot) {
    return std::size_t(level) * kSlots + std::size_t(slot);
  }
  static bool forward(std::size_t index) { return index % kSlots >= std::size_t(Slot::forward_a); }
  std::size_t bytes_of(bool forward_slots) const;
  std::vector<Tensor> buffers_;  // [index(level, slot)]
};

}  // namespace dtnn
