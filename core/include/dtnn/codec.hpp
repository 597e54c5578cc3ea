// Codec: what a rank's bucket of gradients (or of weights, at model averaging) becomes on the wire,
// for compression and privacy research: casts to fp16 or bf16, top-k sparsification, secure
// aggregation's masks, homomorphic encryption, and whatever a plugin brings. A codec encodes a
// rank's values into a payload whose size depends only on the count, and the ranks allgather their
// payloads (dtnn/coded_allreduce.hpp). Then, by the codec's combination, either every rank decodes
// each rank's payload into the sum in rank order (decode_each), or the payloads are words that add
// up modulo 2^64 and their sum is decoded once (add_words: masks added to each payload cancel in
// the sum), or the codec combines the payloads itself, in rank order, and decodes the result once
// (combine: ciphertexts that add without being decrypted), or the codec sums the values over the
// ranks itself, by its own collectives (reduce: PowerSGD's allreduces of two low-rank factors,
// each depending on the last). Either way all ranks hold the same sum.
// Error feedback, which keeps what a lossy payload dropped and adds it to the next step's
// gradients, is the exchange's, not the codec's: encoding is a pure function of the values (masks
// are added after it), except for a codec that encrypts, whose encodings must differ each time
// (deterministic() false).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"

namespace dtnn {

class Communicator;

// Where a bucket's tensors lie in it, as matrices, for a codec that works on matrices (PowerSGD):
// rows x cols values, row by row, from `offset`. Values of the bucket outside every matrix (the
// padding between tensors) are zeros and stay zeros.
struct BucketMatrix {
  std::size_t offset, rows, cols;
};

class DTNN_CORE_EXPORT Codec : public Plugin {
 public:
  enum class Combination {
    decode_each,  // every rank's payload decoded and added, in rank order
    add_words,    // payloads are uint64 words (host order) added modulo 2^64, the sum decoded once
    combine,  // payloads combined by the codec (combine), in rank order, the result decoded once
    reduce,   // the codec sums over the ranks itself (reduce); encode/decode are one rank's case
  };
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

  virtual Combination combination() const { return Combination::decode_each; }
  // Once, before the first payload, with the ranks that will exchange through it; every rank calls
  // it at the same point. A codec that agrees keys with the other ranks does it here, by its own
  // collectives.
  virtual void join(Communicator& comm);
  // add_words codecs: adds this rank's mask for exchange number `round` (the same on every rank,
  // never repeated while joined) to an encoded payload; the ranks' masks sum to zero modulo 2^64.
  // The default adds nothing.
  virtual void mask(std::span<unsigned char> payload, std::uint64_t round) const;
  // Federated runs in which ranks may leave (Communicator::let_ranks_leave): whether the sums go
  // on without a rank that left. Such a rank sends no payload; the payloads that came are then
  // summed as always, and an add_words codec's unmask removes the masks that only the missing
  // payloads would have cancelled. The default: every combination but reduce, whose own
  // collectives would need every rank.
  virtual bool survives_departures() const;
  // add_words codecs, when the ranks in `absent` sent nothing in exchange `round`: adds to
  // `correction` (zeros, the payload's size) the part of this rank's mask for that round that only
  // those ranks' masks cancel. The present ranks' corrections, summed and subtracted from the sum
  // of their payloads, leave the sum of their unmasked payloads. A correction is a mask, not a
  // value: it may go in clear. The default adds nothing (a codec without masks).
  virtual void unmask(std::span<unsigned char> correction, std::uint64_t round,
                      std::span<const int> absent) const;
  // combine codecs: sum becomes the payload of what sum and payload carry added (both
  // payload_bytes(n) long, for the same n). The default refuses.
  virtual void combine(std::span<unsigned char> sum, std::span<const unsigned char> payload) const;
  // reduce codecs: data becomes its sum over comm's ranks as the codec carries it, the same bits
  // on every rank, by the codec's own collectives on comm (named `name`). matrices: where data's
  // tensors lie (empty: data is one tensor, its shape the codec's choice). state is what the codec
  // keeps of this bucket between sums (PowerSGD's factors, its warm start): empty at the first,
  // kept by the exchange. sent: with error feedback (else empty), data's size, where the codec
  // writes what of this rank's values the sum carries, which the exchange subtracts from what it
  // keeps (PowerSGD: an equal share of the sum; Ok-Topk: its values where it was taken). On one
  // rank, with no matrices and an empty state, it must equal decode(encode(data)). Returns the
  // bytes this rank sent. The default refuses.
  virtual std::size_t reduce(Communicator& comm, std::span<float> data,
                             std::span<const BucketMatrix> matrices, std::vector<float>& state,
                             const std::string& name, std::span<float> sent) const;
  // False for a codec whose encoding is randomised (encryption): two encodings of the same values
  // then differ, and decode to the values within the contraction, not bit for bit.
  virtual bool deterministic() const { return true; }
};

}  // namespace dtnn
