// CachingAllocator: device memory from blocks kept for reuse, so that the steady-state training
// step never calls the driver's allocator (cudaMalloc synchronises the device and is slow).
//
// A request is rounded up to its size class (512 B steps below 1 MiB, 2 MiB steps above) and
// served by the smallest cached block of at least that size and at most twice it; only when
// there is none does the driver allocate. A released block goes back to the cache, never to the
// driver, until empty_cache(). When the driver is out of memory the cache is emptied and the
// request tried once more. The logic knows nothing of CUDA: the two driver calls are given to it,
// so that it is tested on any machine.
//
// All work of a process runs on one compute stream, so a block released after the work that used
// it was issued may be handed out again at once: later work on the stream comes after.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

#include "dtnn/device.hpp"

namespace dtnn::cuda {

class CachingAllocator {
 public:
  using DriverAllocate = std::function<void*(std::size_t)>;  // null when out of memory
  using DriverFree = std::function<void(void*)>;

  CachingAllocator(DriverAllocate allocate, DriverFree free);
  ~CachingAllocator();  // returns the cached blocks; blocks still in use are leaked
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Never null: throws dtnn::Error naming the size when the device is out of memory.
  void* allocate(std::size_t bytes);
  void release(void* block);
  void empty_cache();  // every cached (not in use) block back to the driver
  DeviceMemoryStats stats() const;

  static std::size_t size_class(std::size_t bytes);

 private:
  void* take_cached(std::size_t size);  // the mutex held

  DriverAllocate driver_allocate_;
  DriverFree driver_free_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> cached_;       // size -> block
  std::unordered_map<void*, std::size_t> in_use_;  // block -> size
  DeviceMemoryStats stats_;
};

}  // namespace dtnn::cuda
