// What an embedding reads from its input of token ids, on the host, for the CPU layer and its
// CUDA twin alike (the twin copies the batch's ids to the host for it): the ids' check, and each
// sample's length before its first padding id (dtnn/sequence_context.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/sequence_context.hpp"

namespace dtnn::token_ids {

// An id outside [0, vocab) or not whole is the data's or the model file's mistake: say which.
template <class T>
void check(const T* ids, std::int64_t n, std::int64_t vocab) {
  for (std::int64_t i = 0; i < n; ++i)
    if (!(ids[i] >= 0 && ids[i] < T(vocab)) || ids[i] != std::floor(ids[i]))
      throw Error("embedding: input position " + std::to_string(i) + " holds " +
                  std::to_string(double(ids[i])) + ", not a token id in [0, " +
                  std::to_string(vocab) +
                  "): is the dataset a token dataset, and \"vocab\" its vocabulary?");
}

// Each of the n samples' length (of `positions` ids): the position of its first padding id.
template <class T>
void write_lengths(SequenceLengths& lengths, const T* ids, std::int64_t n, std::int64_t positions,
                   std::int64_t padding_id) {
  lengths.of.resize(static_cast<std::size_t>(n));
  for (std::int64_t s = 0; s < n; ++s) {
    const T* row = ids + s * positions;
    lengths.of[static_cast<std::size_t>(s)] = std::find(row, row + positions, T(padding_id)) - row;
  }
}

}  // namespace dtnn::token_ids
