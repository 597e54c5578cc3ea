// bf16: values sent as bfloat16: half the bytes, float32's range, 8 significant bits.
#include "cast_codec.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/precision.hpp"

namespace {

struct Bf16 {
  static std::uint16_t to_bits(float f) { return dtnn::to_bf16(f); }
  static float from_bits(std::uint16_t b) { return dtnn::from_bf16(b); }
  static constexpr double kRelativeError = 1.0 / 256;  // 2^-8
};

dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::codecs::CastCodec<Bf16>();
}

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "codec", .name = "bf16",
                   .description = "values as bfloat16: 2 bytes each, float32's range",
                   .parameters = "{}", .traits = R"({"aliases": ["bfloat16"]})", .factory = create)
