// Workspace: scratch memory for the passes of convolution algorithms (PyDTNN's memory cache).
// A model gives one Workspace to all its layers: they run one at a time, so the memory only has
// to be as large as the largest request, not the sum of them. An algorithm reserves what its
// passes need when it is prepared and claims the memory at the start of each pass; what it left
// there survives to its next pass only if no other algorithm claimed the memory in between
// (holds() says so: i2c then reuses forward's columns in backward-filter).
#pragma once
#include <cstddef>
#include <memory>

#include "dtnn/core_export.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Workspace {
 public:
  // The memory grows to at least `bytes` (allocation happens here, never in a pass).
  void reserve(std::size_t bytes);
  std::size_t bytes() const { return bytes_; }
  // The memory (64-byte aligned), now `user`'s; whatever another user left in it is gone.
  std::byte* claim(const void* user) {
    user_ = user;
    return data_.get();
  }
  // True when the memory still holds what `user` left in it: nobody claimed it since.
  bool holds(const void* user) const { return user_ == user; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t bytes_ = 0;
  const void* user_ = nullptr;
};

// Slices of one workspace block, each starting 64-byte aligned: offsets fixed when the algorithm
// is prepared, pointers taken from the claimed memory at each pass.
class WorkspaceSlices {
 public:
  template <class T>
  std::size_t add(std::size_t count) {
    const std::size_t at = bytes_;
    bytes_ += (count * sizeof(T) + 63) / 64 * 64;
    return at;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
};

// The T array at byte offset `at` of claimed workspace memory.
template <class T>
T* slice(std::byte* memory, std::size_t at) {
  return reinterpret_cast<T*>(memory + at);
}

}  // namespace dtnn
