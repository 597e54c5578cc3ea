#include "caching_allocator.hpp"

#include <algorithm>
#include <string>

#include "dtnn/error.hpp"

namespace dtnn::cuda {

namespace {
constexpr std::size_t kSmallStep = 512, kLargeStep = std::size_t{2} << 20, kSmall = 1 << 20;
}

std::size_t CachingAllocator::size_class(std::size_t bytes) {
  const std::size_t step = bytes < kSmall ? kSmallStep : kLargeStep;
  return std::max<std::size_t>(1, (bytes + step - 1) / step) * step;
}

CachingAllocator::CachingAllocator(DriverAllocate allocate, DriverFree free)
    : driver_allocate_(std::move(allocate)), driver_free_(std::move(free)) {}

CachingAllocator::~CachingAllocator() { empty_cache(); }

void* CachingAllocator::take_cached(std::size_t size) {
  auto it = cached_.lower_bound(size);
  if (it == cached_.end() || it->first > 2 * size) return nullptr;
  void* block = it->second;
  in_use_[block] = it->first;
  stats_.in_use += it->first;
  cached_.erase(it);
  return block;
}

void* CachingAllocator::allocate(std::size_t bytes) {
  const std::size_t size = size_class(bytes);
  std::lock_guard lock(mutex_);
  void* block = take_cached(size);
  if (!block) {
    block = driver_allocate_(size);
    if (!block) {  // out of memory: give the cache back and try once more
      for (auto& [s, b] : cached_) {
        driver_free_(b);
        stats_.reserved -= s;
      }
      cached_.clear();
      block = driver_allocate_(size);
    }
    if (!block)
      throw Error("GPU out of memory allocating " + std::to_string(bytes) + " bytes (" +
                  std::to_string(stats_.in_use >> 20) + " MiB in use by dtnn)");
    ++stats_.driver_allocations;
    stats_.reserved += size;
    stats_.in_use += size;
    in_use_[block] = size;
  }
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  return block;
}

void CachingAllocator::release(void* block) {
  if (!block) return;
  std::lock_guard lock(mutex_);
  auto it = in_use_.find(block);
  DTNN_CHECK(it != in_use_.end(), "releasing device memory the allocator did not hand out");
  stats_.in_use -= it->second;
  cached_.emplace(it->second, block);
  in_use_.erase(it);
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  for (auto& [size, block] : cached_) {
    driver_free_(block);
    stats_.reserved -= size;
  }
  cached_.clear();
}

DeviceMemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace dtnn::cuda
