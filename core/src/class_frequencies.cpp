#include "dtnn/class_frequencies.hpp"

#include <algorithm>
#include <numeric>

#include "dtnn/error.hpp"

namespace dtnn {

std::vector<std::int64_t> training_class_counts(const Dataset& dataset, DType dtype, Layout layout,
                                                std::int64_t max_batch) {
  const std::int64_t classes = dataset.num_classes();
  if (classes < 1) throw Error("class frequencies: the dataset has no classes");
  const std::int64_t total = dataset.size(Split::train);
  const std::int64_t batch = std::max<std::int64_t>(1, std::min(max_batch, total));
  Tensor x = Tensor::empty(dataset.sample_shape(layout).with_batch(batch), dtype, layout);
  Tensor y = Tensor::empty(dataset.label_shape().with_batch(batch), dtype, layout);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(classes), 0);
  std::vector<std::int64_t> indices;
  const bool ids = dataset.class_id_labels();
  for (std::int64_t first = 0; first < total; first += batch) {
    const std::int64_t n = std::min(batch, total - first);
    indices.resize(static_cast<std::size_t>(n));
    std::iota(indices.begin(), indices.end(), first);
    dataset.read(Split::train, indices, x, y);
    dispatch_dtype(dtype, [&](auto z) {
      using T = decltype(z);
      const T* t = y.data<T>();
      const std::int64_t per_sample = y.numel() / batch, values = n * per_sample;
      for (std::int64_t i = 0; i < values; ++i) {
        if (ids) {
          const double id = double(t[i]);
          if (id >= 0 && id < double(classes)) ++counts[static_cast<std::size_t>(id)];
        } else if (t[i] > T(0.5)) {
          ++counts[static_cast<std::size_t>(i % classes)];
        }
      }
    });
  }
  return counts;
}

std::vector<double> frequency_weights(const std::vector<std::int64_t>& counts) {
  const double total = double(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}));
  const double classes = double(counts.size());
  std::vector<double> weights;
  for (const std::int64_t n : counts) weights.push_back(total / (classes * (1.0 + double(n))));
  return weights;
}

}  // namespace dtnn
