#include "dtnn/image_transform.hpp"

#include <algorithm>
#include <cmath>

#include "dtnn/error.hpp"
#include "dtnn/image_shape.hpp"
#include "dtnn/parallel.hpp"
#include "image_view.hpp"

namespace dtnn {

ResampleAxis ResampleAxis::make(std::int64_t in, double central_crop, std::int64_t resize) {
  ResampleAxis a;
  a.in = in;
  const auto margin =
      static_cast<std::int64_t>(std::nearbyint(double(in) * (1.0 - central_crop) / 2.0));
  const std::int64_t window = in - 2 * margin;
  if (window < 1)
    throw Error("dataset.transform_central_crop: " + std::to_string(central_crop) +
                " leaves no pixel of " + std::to_string(in));
  a.out = resize > 0 ? resize : window;
  const double step = double(window) / double(a.out);
  for (std::int64_t i = 0; i < a.out; ++i) {
    // The centre of output pixel i, in source coordinates (pixel centres at integers).
    const double s =
        std::clamp(double(margin) + (double(i) + 0.5) * step - 0.5, 0.0, double(in - 1));
    const auto f = static_cast<std::int64_t>(std::floor(s));
    a.first.push_back(f);
    a.weight.push_back(s - double(f));
  }
  return a;
}

TransformedDataset::TransformedDataset(std::shared_ptr<const Dataset> source,
                                       const TransformOptions& options, std::int64_t max_batch,
                                       DType dtype, Layout layout)
    : source_(std::move(source)) {
  if (!(options.central_crop > 0.0 && options.central_crop <= 1.0))
    throw Error("dataset.transform_central_crop: expected a fraction in (0, 1], got " +
                std::to_string(options.central_crop));
  const Shape s = source_->sample_shape(Layout::nhwc);
  if (s.rank() != 3)
    throw Error("dataset: transform_central_crop and transform_resize need image samples, not " +
                s.str());
  channels_ = s[2];
  rows_ = ResampleAxis::make(s[0], options.central_crop, options.resize_height);
  cols_ = ResampleAxis::make(s[1], options.central_crop, options.resize_width);
  staged_ = Tensor::empty(source_->sample_shape(layout).with_batch(max_batch), dtype, layout);
}

Shape TransformedDataset::sample_shape(Layout layout) const {
  return image_shape(rows_.out, cols_.out, channels_, layout);
}

void TransformedDataset::read(Split split, std::span<const std::int64_t> indices, Tensor& x,
                              Tensor& y) const {
  const auto n = static_cast<std::int64_t>(indices.size());
  DTNN_CHECK(n <= staged_.dim(0) && x.layout() == staged_.layout() && x.dtype() == staged_.dtype(),
             "transformed dataset: read beyond the batch it was built for");
  Tensor in = staged_.slice_batch(0, n);
  source_->read(split, indices, in, y);
  const bool nhwc = x.layout() == Layout::nhwc;
  const std::int64_t c = channels_, ih = rows_.in, iw = cols_.in, oh = rows_.out, ow = cols_.out;
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    parallel_for(n * oh, 1, [&](std::int64_t job) {
      const std::int64_t i = job / oh, r = job % oh;
      const ImageView<const T> s{in.data<T>() + i * ih * iw * c, ih, iw, c, nhwc};
      const ImageView<T> d{x.data<T>() + i * oh * ow * c, oh, ow, c, nhwc};
      const std::int64_t r0 = rows_.first[std::size_t(r)], r1 = std::min(r0 + 1, ih - 1);
      const double wr = rows_.weight[std::size_t(r)];
      for (std::int64_t col = 0; col < ow; ++col) {
        const std::int64_t c0 = cols_.first[std::size_t(col)], c1 = std::min(c0 + 1, iw - 1);
        const double wc = cols_.weight[std::size_t(col)];
        for (std::int64_t ch = 0; ch < c; ++ch) {
          const double top = (1 - wc) * double(s.at(r0, c0, ch)) + wc * double(s.at(r0, c1, ch));
          const double bottom = (1 - wc) * double(s.at(r1, c0, ch)) + wc * double(s.at(r1, c1, ch));
          d.at(r, col, ch) = static_cast<T>((1 - wr) * top + wr * bottom);
        }
      }
    });
  });
}

}  // namespace dtnn
