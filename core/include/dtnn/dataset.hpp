// Dataset: sample shape, class count, split sizes, and reading samples by index into a batch.
//
// Labels come in one of three forms, which class_id_labels() and value_labels() tell apart:
//   one-hot:    y per sample is {num_classes}, a 1 at the class (images, the default);
//   class ids:  y per sample is {positions...}, one class id per position stored as its value (a
//               sequence's next tokens: {T}, ids in [0, num_classes), kIgnoredLabel where a
//               position has no target, such as padding). The model then outputs
//               {positions..., num_classes}.
//   values:     y per sample is {num_classes} target values (regression; multi-label 0/1
//               columns), which the model's num_classes outputs approach.
#pragma once
#include <cstdint>
#include <span>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class Tokenizer;

enum class Split : std::uint8_t { train = 0, test = 1 };

// A class-id label with no target (padding): losses and metrics skip it.
inline constexpr double kIgnoredLabel = -1.0;

class DTNN_CORE_EXPORT Dataset : public Plugin {
 public:
  ~Dataset() override;
  virtual Shape sample_shape(Layout layout) const = 0;  // e.g. {28, 28, 1} for NHWC
  virtual std::int64_t num_classes() const = 0;
  // True when y holds class ids per position, not one-hot rows (the shapes cannot say: a context
  // of T positions may equal the number of classes).
  virtual bool class_id_labels() const { return false; }
  // True when y holds target values (regression, multi-label), not one-hot rows.
  virtual bool value_labels() const { return false; }
  // Per-sample shape of y: {num_classes} (one-hot) unless the dataset gives class ids.
  virtual Shape label_shape() const { return Shape{num_classes()}; }
  // Token datasets: the number of distinct input ids (a model's embedding size, "$vocab" in a
  // model file); 0 for the others.
  virtual std::int64_t vocabulary_size() const { return 0; }
  // Sequence-pair datasets: each sample is the source's ids, this many, then the decoder's
  // ("$source_length" in a model file, an encoder_decoder's split); 0 for the others.
  virtual std::int64_t source_length() const { return 0; }
  // Token datasets: their ids' text (dtnn generate); null for the others.
  virtual const Tokenizer* tokenizer() const { return nullptr; }
  virtual std::int64_t size(Split split) const = 0;
  // Writes sample indices[i] of split into row i of x ([n, sample_shape]) and its label into
  // row i of y ([n, label_shape]); n = indices.size() <= x.dim(0). In-memory datasets must not
  // allocate; those that decode files may.
  virtual void read(Split split, std::span<const std::int64_t> indices, Tensor& x,
                    Tensor& y) const = 0;
  // A hint, given while the current batch trains: these samples are the next read. A dataset
  // that decodes (imagenet) starts on them in the background; the others ignore it.
  virtual void prefetch(Split split, std::span<const std::int64_t> indices) const {
    (void)split;
    (void)indices;
  }
};

}  // namespace dtnn
