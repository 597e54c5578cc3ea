// The CUDA half of merge_blocks.hpp: what the add and concat twins do on the compute stream, sums
// through cuDNN and the strided copies that place a path's channels in the merged tensor.
#pragma once
#include <cstddef>

#include "check.hpp"
#include "context.hpp"
#include "descriptors.hpp"
#include "merge_blocks.hpp"

namespace dtnn::cuda {

// a += b, element by element (the same NCHW shape and dtype), described by their shape: a batch
// of images [N, C, H, W] or of feature vectors [N, F] (as [N, F, 1, 1]).
inline void add_into(const Tensor& a, const Tensor& b) {
  const Shape& s4 = a.shape();
  const bool image = s4.rank() == 4;
  const TensorDesc d(s4[0], image ? s4[1] : a.numel() / s4[0], image ? s4[2] : 1, image ? s4[3] : 1,
                     a.dtype());
  const Scalars s(a.dtype());
  DTNN_CUDNN(cudnnAddTensor(Context::get().cudnn(), s.one(), d, b.raw(), s.one(), d, a.raw()));
}

// into_whole: the part's pieces (g) into their places in whole; else the reverse. One 2-D copy:
// a piece per row.
inline void copy_pieces(const Tensor& part, const Tensor& whole, const block_geometry::Pieces& g,
                        bool into_whole) {
  const std::size_t size = dtype_size(part.dtype());
  auto* mine = static_cast<std::byte*>(part.raw());
  auto* theirs = static_cast<std::byte*>(whole.raw()) + static_cast<std::size_t>(g.at) * size;
  const std::size_t width = static_cast<std::size_t>(g.piece) * size;
  const std::size_t whole_pitch = static_cast<std::size_t>(g.row) * size;
  const auto rows = static_cast<std::size_t>(g.rows);
  cudaStream_t s = Context::get().stream();
  if (into_whole)
    DTNN_CUDA(cudaMemcpy2DAsync(theirs, whole_pitch, mine, width, width, rows,
                                cudaMemcpyDeviceToDevice, s));
  else
    DTNN_CUDA(cudaMemcpy2DAsync(mine, width, theirs, whole_pitch, width, rows,
                                cudaMemcpyDeviceToDevice, s));
}

}  // namespace dtnn::cuda
