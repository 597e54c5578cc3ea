// A codec that sends each value as 16 bits (fp16 or bf16): half the bytes of float32, every value
// kept to the format's precision.
#pragma once
#include <cstdint>
#include <cstring>

#include "dtnn/codec.hpp"

namespace dtnn::codecs {

// Format: to_bits(float) -> uint16_t, from_bits(uint16_t) -> float, and kRelativeError, the
// largest relative rounding error in the normal range.
template <class Format>
class CastCodec final : public Codec {
 public:
  std::size_t payload_bytes(std::size_t n) const override { return 2 * n; }

  void encode(std::span<const float> x, std::span<unsigned char> payload) const override {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::uint16_t h = Format::to_bits(x[i]);
      std::memcpy(payload.data() + 2 * i, &h, 2);
    }
  }

  void decode_add(std::span<const unsigned char> payload, std::span<float> out,
                  float scale) const override {
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint16_t h;
      std::memcpy(&h, payload.data() + 2 * i, 2);
      out[i] += scale * Format::from_bits(h);
    }
  }

  double contraction(std::size_t) const override {
    return 1.0 - Format::kRelativeError * Format::kRelativeError;
  }
};

}  // namespace dtnn::codecs
