#include "dtnn/coded_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"

namespace dtnn {

namespace {

std::string listed(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

}  // namespace

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
  const Codec::Combination combination = codec_.combination();
  const std::uint64_t round = round_;
  if (combination == Codec::Combination::add_words) {
    DTNN_CHECK(bytes % sizeof(std::uint64_t) == 0, "an add_words codec's payload is not words");
    codec_.mask(payload(send_.data()), round_++);
  }
  const std::size_t block = gather(words, name);
  std::fill(data.begin(), data.end(), 0.0f);
  if (combination == Codec::Combination::decode_each) {
    for (std::size_t rank = 0; rank < ranks; ++rank)
      if (present(rank)) codec_.decode_add(payload(recv_.data() + rank * block), data, 1.0f);
    return bytes;
  }
  if (combination == Codec::Combination::combine) {
    bool first = true;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
      if (!present(rank)) continue;
      const auto from = payload(recv_.data() + rank * block);
      if (first)
        words_.assign(from.begin(), from.end());
      else
        codec_.combine(words_, from);
      first = false;
    }
    codec_.decode_add(words_, data, 1.0f);
    return bytes;
  }
  words_.assign(bytes, 0);
  auto add_words = [&](std::size_t rank, bool subtract) {
    const unsigned char* from = payload(recv_.data() + rank * block).data();
    for (std::size_t at = 0; at < bytes; at += sizeof(std::uint64_t)) {
      std::uint64_t sum, word;
      std::memcpy(&sum, words_.data() + at, sizeof sum);
      std::memcpy(&word, from + at, sizeof word);
      sum = subtract ? sum - word : sum + word;  // unsigned: modulo 2^64
      std::memcpy(words_.data() + at, &sum, sizeof sum);
    }
  };
  for (std::size_t rank = 0; rank < ranks; ++rank)
    if (present(rank)) add_words(rank, false);
  if (!absent_.empty()) {
    // The present ranks' corrections, gathered as payloads are: subtracted, they leave the sum
    // of the present ranks' unmasked payloads.
    // A rank that left stays gone: the second gather's absent ranks are the first's and those
    // that left in between, which absent() then lists.
    const std::vector<unsigned char> was_absent = absent_rank_;
    send_.assign(words, 0.0f);
    codec_.unmask(payload(send_.data()), round, absent_);
    gather(words, name + " (the masks of ranks that left)");
    std::vector<int> lost;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
      if (was_absent[rank]) continue;  // neither payload nor correction
      if (present(rank))
        add_words(rank, true);
      else
        lost.push_back(static_cast<int>(rank));
    }
    if (!lost.empty()) {
      if (comm_.rank() == 0)
        log_warning(name + ": rank(s) " + listed(lost) +
                    " left before sending what removes the masks of the ranks that had left: "
                    "this sum is lost (NaN)");
      std::fill(data.begin(), data.end(), std::nanf(""));
      return 2 * bytes;
    }
    codec_.decode_add(words_, data, 1.0f);
    return 2 * bytes;
  }
  codec_.decode_add(words_, data, 1.0f);
  return bytes;
}

std::size_t CodedAllreduce::gather(std::size_t words, const std::string& name) {
  const auto ranks = static_cast<std::size_t>(comm_.size());
  const std::size_t block = words + (ranks_may_leave_ ? 1 : 0);
  send_.resize(block);
  if (ranks_may_leave_) send_[words] = 1.0f;  // the mark: a rank that left sends zeros
  recv_.resize(block * ranks);
  comm_.allgather(send_.data(), recv_.data(), block, DType::float32, name);
  absent_.clear();
  absent_rank_.assign(ranks, 0);
  if (!ranks_may_leave_) return block;
  for (std::size_t rank = 0; rank < ranks; ++rank)
    if (recv_[rank * block + words] != 1.0f) {
      absent_rank_[rank] = 1;
      absent_.push_back(static_cast<int>(rank));
    }
  return block;
}

}  // namespace dtnn
