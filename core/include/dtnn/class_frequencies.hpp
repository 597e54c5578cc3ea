// Class weights from the training split's class frequencies (loss.weights: "frequency", PyDTNN
// 3.x's default weights for its chest X-ray set, and its --use-loss-weights without values):
//   n_c = the training samples whose target has class c (one-hot: its class; multi-label: each
//         column that is 1; class ids: each position with id c),  N = sum_c n_c,
//   w_c = N / (C (1 + n_c))
// so a class seen as often as the average weighs about 1, a rare one more, and one never seen
// N / C (the 1 keeps it finite).
#pragma once
#include <cstdint>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/dataset.hpp"

namespace dtnn {

// n_c per class, reading the training split in batches of at most max_batch samples of the
// dtype and layout the dataset was opened for.
DTNN_CORE_EXPORT std::vector<std::int64_t> training_class_counts(const Dataset& dataset,
                                                                 DType dtype, Layout layout,
                                                                 std::int64_t max_batch);

// w_c from n_c.
DTNN_CORE_EXPORT std::vector<double> frequency_weights(const std::vector<std::int64_t>& counts);

}  // namespace dtnn
