// What the add and concat layers' CPU and CUDA plugins share: the merged shape of their paths,
// where each of concat's paths sits in the merged tensor, and the device-independent half of each
// layer (AddBase, ConcatBase), to which a plugin adds its device's copies and sums.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/block_layer.hpp"
#include "dtnn/error.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::layer_parameters {

// add's and concat's parameters, with their defaults (their CPU plugins' and CUDA twins').
inline constexpr const char* kBlockParameters = R"({"paths": [[], []]})";

}  // namespace dtnn::layer_parameters

namespace dtnn::block_geometry {

// add: every path must give the same shape, which is the sum's.
inline Shape sum_shape(const std::vector<Shape>& paths) {
  for (std::size_t p = 1; p < paths.size(); ++p)
    if (!(paths[p] == paths[0]))
      throw Error("add: path " + std::to_string(p) + " gives " + paths[p].str() +
                  " but path 0 gives " + paths[0].str() + " (paths must agree to be added)");
  return paths[0];
}

inline int channel_axis(const Shape& s, Layout layout) {
  return layout == Layout::nhwc ? s.rank() - 1 : 0;
}

// concat: paths agree on all but channels; the merged shape has the channels of all.
inline Shape concat_shape(const std::vector<Shape>& paths, Layout layout) {
  const int ch = channel_axis(paths[0], layout);
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

// Each path's output is a sequence of pieces, one per row of the merged tensor: NHWC, a pixel's
// channels (rows are pixels); NCHW, a sample's channel planes (rows are samples). Row r of the
// merged tensor is path 0's piece r, then path 1's, and so on.
struct Pieces {
  std::int64_t piece = 0;  // elements of path p's piece
  std::int64_t row = 0;    // elements of a row of the merged tensor
  std::int64_t at = 0;     // where path p's piece starts within a row
  std::int64_t rows = 0;
};

// Path p's pieces, for a part of part_numel elements (a batch of path p's output).
inline Pieces pieces_of(const std::vector<Shape>& paths, Layout layout, std::size_t p,
                        std::int64_t part_numel, std::int64_t whole_numel) {
  auto piece_of = [&](const Shape& s) {
    return layout == Layout::nhwc ? s[s.rank() - 1] : s.numel();
  };
  Pieces g;
  g.piece = piece_of(paths[p]);
  g.rows = part_numel / g.piece;
  g.row = whole_numel / g.rows;
  for (std::size_t q = 0; q < p; ++q) g.at += piece_of(paths[q]);
  return g;
}

}  // namespace dtnn::block_geometry

namespace dtnn {

// add: every path gets dy itself (d(sum)/d(output of path p) = 1). A plugin gives merge (y = the
// sum of the outputs) and, off the host, accumulate.
class AddBase : public BlockLayer {
 public:
  using BlockLayer::BlockLayer;
  std::string type() const override { return "add"; }
  bool backward_reads_output() const override { return false; }
  // The sum goes over the first path's last output, which backward does not read (merge then
  // finds y and that output the same memory).
  Tensor output_buffer() override { return num_paths() ? path(0).reusable_output() : Tensor(); }

 protected:
  Shape merged_shape(const std::vector<Shape>& paths) const override {
    return block_geometry::sum_shape(paths);
  }
  const Tensor& share(const Tensor& dy, std::size_t, Tensor&) const override { return dy; }
  bool shares_need_buffers() const override { return false; }
  bool backward_reads_path_outputs() const override { return false; }
  bool merges_into_a_path_output() const override { return true; }
};

// concat: merge and share are copies of each path's pieces (block_geometry::Pieces), into y and
// out of dy. A plugin gives copy_pieces and, off the host, accumulate.
class ConcatBase : public BlockLayer {
 public:
  using BlockLayer::BlockLayer;
  std::string type() const override { return "concat"; }
  bool backward_reads_output() const override { return false; }

 protected:
  // into_whole: the part's pieces into their places in whole; else the reverse.
  virtual void copy_pieces(const Tensor& part, const Tensor& whole, const block_geometry::Pieces& g,
                           bool into_whole) const = 0;

  Shape merged_shape(const std::vector<Shape>& paths) const override {
    return block_geometry::concat_shape(paths, layout());
  }
  void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const override {
    for (std::size_t p = 0; p < outputs.size(); ++p)
      copy_pieces(*outputs[p], y, pieces(p, *outputs[p], y), true);
  }
  const Tensor& share(const Tensor& dy, std::size_t p, Tensor& buffer) const override {
    copy_pieces(buffer, dy, pieces(p, buffer, dy), false);
    return buffer;
  }
  bool shares_need_buffers() const override { return true; }
  bool backward_reads_path_outputs() const override { return false; }

 private:
  block_geometry::Pieces pieces(std::size_t p, const Tensor& part, const Tensor& whole) const {
    return block_geometry::pieces_of(path_shapes(), layout(), p, part.numel(), whole.numel());
  }
};

}  // namespace dtnn
