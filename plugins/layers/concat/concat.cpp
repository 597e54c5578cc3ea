// concat: parallel paths' outputs joined along channels (PyDTNN's ConcatenationBlock, as in
// GoogLeNet's inception modules and DenseNet's dense layers). Paths must agree on all but
// channels; block_geometry.hpp says where each path's channels go.
#include <cstring>

#include "../common/block_geometry.hpp"
#include "dtnn/block_layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class Concat final : public BlockLayer {
 public:
  using BlockLayer::BlockLayer;
  std::string type() const override { return "concat"; }

 protected:
  Shape merged_shape(const std::vector<Shape>& paths) const override {
    return block_geometry::concat_shape(paths, layout());
  }

  void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const override {
    for (std::size_t p = 0; p < outputs.size(); ++p) copy_pieces(*outputs[p], y, p, true);
  }

  const Tensor& share(const Tensor& dy, std::size_t p, Tensor& buffer) const override {
    copy_pieces(buffer, dy, p, false);
    return buffer;
  }
  bool shares_need_buffers() const override { return true; }

 private:
  // into_whole: path p's pieces from `part` into their places in `whole`; else the reverse.
  void copy_pieces(const Tensor& part, const Tensor& whole, std::size_t p, bool into_whole) const {
    const auto [piece, row, at, rows] =
        block_geometry::pieces_of(path_shapes(), layout(), p, part.numel(), whole.numel());
    const std::size_t size = dtype_size(part.dtype()), bytes = static_cast<std::size_t>(piece) * size;
    auto* a = static_cast<std::byte*>(part.raw());
    auto* b = static_cast<std::byte*>(whole.raw());
    parallel_for(rows, 256, [&](std::int64_t r) {
      std::byte* mine = a + static_cast<std::size_t>(r * piece) * size;
      std::byte* theirs = b + static_cast<std::size_t>(r * row + at) * size;
      into_whole ? std::memcpy(theirs, mine, bytes) : std::memcpy(mine, theirs, bytes);
    });
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Concat(p); }

}  // namespace

DTNN_PLUGIN("layer", "concat", "parallel paths of layers joined along channels",
            R"({"paths": [[], []]})", create)
