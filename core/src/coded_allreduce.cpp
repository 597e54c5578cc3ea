#include "dtnn/coded_allreduce.hpp"

#include <algorithm>
#include <cstring>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"

namespace dtnn {

CodedAllreduce::CodedAllreduce(const Codec& codec, Communicator& comm)
    : codec_(codec), comm_(comm) {}

std::vector<float>& CodedAllreduce::carry(std::size_t region, std::span<const float> data) {
  if (residuals_.size() <= region) residuals_.resize(region + 1);
  std::vector<float>& r = residuals_[region];
  r.resize(data.size(), 0.0f);
  for (std::size_t i = 0; i < data.size(); ++i) r[i] += data[i];
  return r;
}

std::size_t CodedAllreduce::sum(std::span<float> data, const std::string& name, bool error_feedback,
                                std::size_t region, std::span<const BucketMatrix> matrices) {
  if (codec_.combination() == Codec::Combination::reduce) {
    if (states_.size() <= region) states_.resize(region + 1);
    if (!error_feedback) return codec_.reduce(comm_, data, matrices, states_[region], name, {});
    std::vector<float>& r = carry(region, data);
    std::copy(r.begin(), r.end(), data.begin());
    sent_.assign(data.size(), 0.0f);
    const std::size_t bytes = codec_.reduce(comm_, data, matrices, states_[region], name, sent_);
    for (std::size_t i = 0; i < data.size(); ++i) r[i] -= sent_[i];
    return bytes;
  }
  const std::size_t n = data.size(), bytes = codec_.payload_bytes(n);
  const std::size_t words = (bytes + sizeof(float) - 1) / sizeof(float);
  const auto ranks = static_cast<std::size_t>(comm_.size());
  send_.assign(words, 0.0f);
  recv_.resize(words * ranks);
  auto payload = [&](float* at) {
    return std::span<unsigned char>(reinterpret_cast<unsigned char*>(at), bytes);
  };
  if (error_feedback) {
    std::vector<float>& r = carry(region, data);
    codec_.encode(r, payload(send_.data()));
    codec_.decode_add(payload(send_.data()), r, -1.0f);  // less what the payload carries
  } else {
    codec_.encode(data, payload(send_.data()));
  }
  const bool add_words = codec_.combination() == Codec::Combination::add_words;
  if (add_words) {
    DTNN_CHECK(bytes % sizeof(std::uint64_t) == 0, "an add_words codec's payload is not words");
    codec_.mask(payload(send_.data()), round_++);
  }
  comm_.allgather(send_.data(), recv_.data(), words, DType::float32, name);
  std::fill(data.begin(), data.end(), 0.0f);
  const Codec::Combination combination = codec_.combination();
  if (combination == Codec::Combination::decode_each) {
    for (std::size_t rank = 0; rank < ranks; ++rank)
      codec_.decode_add(payload(recv_.data() + rank * words), data, 1.0f);
    return bytes;
  }
  if (combination == Codec::Combination::combine) {
    const auto first = payload(recv_.data());
    words_.assign(first.begin(), first.end());
    for (std::size_t rank = 1; rank < ranks; ++rank)
      codec_.combine(words_, payload(recv_.data() + rank * words));
    codec_.decode_add(words_, data, 1.0f);
    return bytes;
  }
  words_.assign(bytes, 0);
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    const unsigned char* from = payload(recv_.data() + rank * words).data();
    for (std::size_t at = 0; at < bytes; at += sizeof(std::uint64_t)) {
      std::uint64_t sum, word;
      std::memcpy(&sum, words_.data() + at, sizeof sum);
      std::memcpy(&word, from + at, sizeof word);
      sum += word;  // unsigned: modulo 2^64
      std::memcpy(words_.data() + at, &sum, sizeof sum);
    }
  }
  codec_.decode_add(words_, data, 1.0f);
  return bytes;
}

}  // namespace dtnn
