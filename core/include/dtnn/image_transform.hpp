// Deterministic image transforms applied to every sample of every split (PyDTNN's
// transform_crop and transform_resize data options):
//   central_crop  fraction of the height and the width kept, centred; 1 keeps all. As PyDTNN,
//                 round(size * (1 - f) / 2) pixels go from each side (round half to even).
//   resize        the output height and width after the crop; 0 keeps the cropped size. Bilinear,
//                 pixel centres aligned (cv2's INTER_LINEAR; PyDTNN resizes with PIL's default).
// TransformedDataset wraps a dataset so that the samples it reads come out transformed: the model
// is built for the transformed shape, and augmentation and normalisation see transformed images.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/dataset.hpp"

namespace dtnn {

struct TransformOptions {
  double central_crop = 1.0;
  std::int64_t resize_height = 0, resize_width = 0;
  bool transforms() const { return central_crop != 1.0 || resize_height > 0 || resize_width > 0; }
};

// The source rows (or columns) and weights that give each output row of a crop-then-resize:
// output i = (1 - weight[i]) * source[first[i]] + weight[i] * source[first[i] + 1], where
// first[i] + 1 is clamped to the last source row.
struct ResampleAxis {
  std::int64_t in = 0, out = 0;  // source size, output size
  std::vector<std::int64_t> first;
  std::vector<double> weight;
  DTNN_CORE_EXPORT static ResampleAxis make(std::int64_t in, double central_crop,
                                            std::int64_t resize);
};

class DTNN_CORE_EXPORT TransformedDataset final : public Dataset {
 public:
  // max_batch: the most samples one read asks for; the source's batch is staged in a buffer of
  // that many samples, allocated here, so reads do not allocate.
  TransformedDataset(std::shared_ptr<const Dataset> source, const TransformOptions& options,
                     std::int64_t max_batch, DType dtype, Layout layout);
  Shape sample_shape(Layout layout) const override;
  std::int64_t num_classes() const override { return source_->num_classes(); }
  bool class_id_labels() const override { return source_->class_id_labels(); }
  Shape label_shape() const override { return source_->label_shape(); }
  std::int64_t size(Split split) const override { return source_->size(split); }
  void read(Split split, std::span<const std::int64_t> indices, Tensor& x,
            Tensor& y) const override;
  void prefetch(Split split, std::span<const std::int64_t> indices) const override {
    source_->prefetch(split, indices);
  }

 private:
  std::shared_ptr<const Dataset> source_;
  std::int64_t channels_;
  ResampleAxis rows_, cols_;
  mutable Tensor staged_;  // the source's samples before the transform
};

}  // namespace dtnn
