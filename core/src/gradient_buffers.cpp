#include "dtnn/gradient_buffers.hpp"

#include "dtnn/error.hpp"

namespace dtnn {

void GradientBuffers::reserve(int level, Slot slot, std::int64_t numel, DType dtype,
                              Device device) {
  DTNN_CHECK(level >= 0 && numel >= 0, "GradientBuffers::reserve: a negative level or size");
  const std::size_t at = index(level, slot);
  if (buffers_.size() <= at) buffers_.resize(at + 1);
  for (const Tensor& t : buffers_)
    DTNN_CHECK(!t.defined() || (t.dtype() == dtype && t.device() == device),
               "GradientBuffers: every chain of a model shares one dtype and device");
  Tensor& b = buffers_[at];
  if (!b.defined() || b.numel() < numel)
    b = Tensor::empty(Shape{numel}, dtype, Layout::nhwc, device);
}

Tensor GradientBuffers::view(int level, Slot slot, const Shape& shape, Layout layout) const {
  const std::size_t at = index(level, slot);
  DTNN_CHECK(at < buffers_.size() && buffers_[at].defined(),
             "GradientBuffers::view: level " + std::to_string(level) + " slot " +
                 std::to_string(static_cast<int>(slot)) + " was never reserved");
  return buffers_[at].view(shape).with_layout(layout);
}

std::size_t GradientBuffers::bytes_of(bool forward_slots) const {
  std::size_t total = 0;
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].defined() && forward(i) == forward_slots) total += buffers_[i].bytes();
  return total;
}

std::size_t GradientBuffers::bytes() const { return bytes_of(false); }
std::size_t GradientBuffers::forward_bytes() const { return bytes_of(true); }

}  // namespace dtnn
