// The padded sequences' lengths (dtnn/sequence_context.hpp, written on the host by the embedding
// or its twin in forward) on the GPU, for the sequence layers' twins that mask padding
// (attention, sequence_pool): uploaded once per batch on the compute stream. CUDA code: include
// it from .cu files only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check.hpp"
#include "context.hpp"
#include "dtnn/error.hpp"
#include "dtnn/sequence_context.hpp"

namespace dtnn::cuda {

class DeviceLengths {
 public:
  // lengths: the chain's (null or empty: no padding); room for `samples` of them.
  DeviceLengths(std::shared_ptr<const SequenceLengths> lengths, std::int64_t samples)
      : lengths_(std::move(lengths)),
        device_(Context::get().allocate(std::size_t(samples) * sizeof(std::int64_t))),
        samples_(samples) {}

  // The first n samples' lengths on the device, or null when the batch has no padding. `who`
  // names the layer in the error for a batch the lengths do not cover.
  const std::int64_t* upload(std::int64_t n, const std::string& who) {
    if (!lengths_ || lengths_->of.empty()) return nullptr;
    if (std::int64_t(lengths_->of.size()) < n || n > samples_)
      throw Error(who + ": lengths for " + std::to_string(lengths_->of.size()) +
                  " samples, the batch has " + std::to_string(n));
    host_.assign(lengths_->of.begin(), lengths_->of.begin() + n);
    auto* device = reinterpret_cast<std::int64_t*>(device_.get());
    DTNN_CUDA(cudaMemcpyAsync(device, host_.data(), std::size_t(n) * sizeof(std::int64_t),
                              cudaMemcpyHostToDevice, Context::get().stream()));
    return device;
  }

 private:
  std::shared_ptr<const SequenceLengths> lengths_;
  std::shared_ptr<std::byte> device_;
  std::int64_t samples_;
  std::vector<std::int64_t> host_;
};

// Sample n's positions before its padding, at least one (SequenceLengths::keys on the device).
__host__ __device__ inline std::int64_t length_of(const std::int64_t* lengths, std::int64_t n,
                                                  std::int64_t positions) {
  if (!lengths) return positions;
  return lengths[n] < 1 ? 1 : (lengths[n] > positions ? positions : lengths[n]);
}

}  // namespace dtnn::cuda
