// concat: parallel paths' outputs joined along channels (PyDTNN's ConcatenationBlock, as in
// GoogLeNet's inception modules and DenseNet's dense layers). Paths must agree on all but
// channels; merge_blocks.hpp says where each path's channels go.
#include <cstring>

#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "merge_blocks.hpp"

namespace {

using namespace dtnn;

class Concat final : public ConcatBase {
 public:
  using ConcatBase::ConcatBase;

 protected:
  void copy_pieces(const Tensor& part, const Tensor& whole, const block_geometry::Pieces& g,
                   bool into_whole) const override {
    const std::size_t size = dtype_size(part.dtype());
    const std::size_t bytes = static_cast<std::size_t>(g.piece) * size;
    auto* a = static_cast<std::byte*>(part.raw());
    auto* b = static_cast<std::byte*>(whole.raw());
    parallel_for(g.rows, 256, [&](std::int64_t r) {
      std::byte* mine = a + static_cast<std::size_t>(r * g.piece) * size;
      std::byte* theirs = b + static_cast<std::size_t>(r * g.row + g.at) * size;
      into_whole ? std::memcpy(theirs, mine, bytes) : std::memcpy(mine, theirs, bytes);
    });
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Concat(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"paths": [[{"type": "conv2d", "filters": 3, "kernel": 1}], [{"type": "conv2d", "filters": 2, "kernel": 3, "padding": 1}, {"type": "batchnorm"}], []]}, "input": [4, 3, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "concat",
                   .description = "parallel paths of layers joined along channels",
                   .parameters = dtnn::layer_parameters::kBlockParameters, .traits = kTraits,
                   .factory = create)
