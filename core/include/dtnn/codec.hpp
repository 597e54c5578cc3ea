// Codec: what a rank's bucket of gradients (or of weights, at model averaging) becomes on the wire,
// for compression research: casts to fp16 or bf16, top-k sparsification, and whatever a plugin
// brings. A codec encodes a rank's values into a payload whose size depends only on the count, the
// ranks allgather their payloads, and every rank decodes each rank's payload into the sum in rank
// order, so all ranks hold the same sum (dtnn/coded_allreduce.hpp). Error feedback, which keeps
// what a lossy payload dropped and adds it to the next step's gradients, is the exchange's, not
// the codec's: a codec is a pure function of its input.
#pragma once
#include <cstddef>
#include <span>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Codec : public Plugin {
 public:
  ~Codec() override;
  // The payload's size in bytes for n values: the same on every rank for the same n.
  virtual std::size_t payload_bytes(std::size_t n) const = 0;
  // Writes the encoding of x into payload (payload_bytes(x.size()) bytes).
  virtual void encode(std::span<const float> x, std::span<unsigned char> payload) const = 0;
  // out += scale * decode(payload); out.size() is the n the payload was encoded from.
  virtual void decode_add(std::span<const unsigned char> payload, std::span<float> out,
                          float scale) const = 0;
  // The codec's guarantee, which the conformance harness checks: a round trip loses at most
  // |x - decode(encode(x))|^2 <= (1 - delta) |x|^2 for values in fp16's normal range (a
  // delta-contraction; delta = 1: lossless; top-k of n keeps delta = k / n).
  virtual double contraction(std::size_t n) const = 0;
  // Whether averaging weights through it makes sense (a cast does; dropping most weights does
  // not: weights then go plain).
  virtual bool carries_weights() const { return true; }
};

}  // namespace dtnn
