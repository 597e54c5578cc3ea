// concat: parallel paths' outputs joined along channels (PyDTNN's ConcatenationBlock, as in
// GoogLeNet's inception modules and DenseNet's dense layers). Paths must agree on all but
// channels.
//
// Each path's output is a sequence of pieces, one per row of y: NHWC, a pixel's channels (y's
// rows are pixels); NCHW, a sample's channel planes (y's rows are samples). Row r of y is path 0's
// piece r, then path 1's, and so on.
#include <cstring>

#include "dtnn/block_layer.hpp"
#include "dtnn/error.hpp"
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
    const int ch = channel_axis(paths[0]);
    Shape out = paths[0];
    out[ch] = 0;
    for (std::size_t p = 0; p < paths.size(); ++p) {
      Shape a = paths[p], b = paths[0];
      a[ch] = b[ch] = 0;
      if (!(a == b))
        throw Error("concat: path " + std::to_string(p) + " gives " + paths[p].str() +
                    " but path 0 gives " + paths[0].str() + " (all but channels must agree)");
      out[ch] += paths[p][ch];
    }
    return out;
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
  int channel_axis(const Shape& s) const { return layout() == Layout::nhwc ? s.rank() - 1 : 0; }

  // into_whole: path p's pieces from `part` into their places in `whole`; else the reverse.
  void copy_pieces(const Tensor& part, const Tensor& whole, std::size_t p, bool into_whole) const {
    const Shape& s = path_shapes()[p];
    const std::int64_t piece = layout() == Layout::nhwc ? s[s.rank() - 1] : s.numel();
    const std::int64_t rows = part.numel() / piece, row = whole.numel() / rows;
    std::int64_t at = 0;  // where path p's piece starts within a row of whole
    for (std::size_t q = 0; q < p; ++q) {
      const Shape& sq = path_shapes()[q];
      at += layout() == Layout::nhwc ? sq[sq.rank() - 1] : sq.numel();
    }
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
