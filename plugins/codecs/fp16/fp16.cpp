// fp16: values sent as IEEE half precision (PyDTNN 3.x's --model-sync-quantize with
// --model-sync-dtype float16): half the bytes, 11 significant bits, magnitudes up to 65504 (beyond:
// infinity, which the non-finite checks catch).
#include "cast_codec.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/precision.hpp"

namespace {

struct Fp16 {
  static std::uint16_t to_bits(float f) { return dtnn::to_fp16(f); }
  static float from_bits(std::uint16_t h) { return dtnn::from_fp16(h); }
  static constexpr double kRelativeError = 1.0 / 2048;  // 2^-11
};

dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::codecs::CastCodec<Fp16>();
}

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "codec", .name = "fp16",
                   .description = "values as IEEE half precision: 2 bytes each", .parameters = "{}",
                   .traits = R"({"aliases": ["float16"]})", .factory = create)
