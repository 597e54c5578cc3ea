// A "cuda" DeviceRuntime on host memory for the tests that run without a GPU: what the core asks
// of a device, observable (counts of each call, which pointers are "device" memory), with the
// arithmetic done for real so that results can be checked.
#pragma once
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "dtnn/device.hpp"

namespace dtnn::test {

class HostBackedRuntime final : public DeviceRuntime {
 public:
  int allocations = 0, copies = 0, zeroings = 0, uploads = 0, pins = 0, scales = 0,
      synchronizations = 0;
  Device device() const override { return Device::cuda; }
  void open(int, const Params&) override {}
  std::shared_ptr<std::byte> allocate(std::size_t bytes) override {
    ++allocations;
    auto* p = static_cast<std::byte*>(std::malloc(bytes ? bytes : 1));
    std::memset(p, 0xAB, bytes);  // garbage, as device memory is
    (*blocks_)[p] = bytes;
    return std::shared_ptr<std::byte>(p, [blocks = blocks_](std::byte* q) {
      blocks->erase(q);
      std::free(q);
    });
  }
  // True when p lies in memory this runtime handed out: "device memory".
  bool owns(const void* p) const {
    auto* b = static_cast<const std::byte*>(p);
    auto it = blocks_->upper_bound(const_cast<std::byte*>(b));
    if (it == blocks_->begin()) return false;
    --it;
    return b < it->first + it->second;
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    ++copies;
    std::memcpy(dst, src, bytes);
  }
  void upload_async(std::initializer_list<Upload> parts) override {
    ++uploads;
    for (const auto& p : parts) std::memcpy(p.device, p.host, p.bytes);
  }
  void fill_zero(void* dst, std::size_t bytes) override {
    ++zeroings;
    std::memset(dst, 0, bytes);
  }
  void scale(void* y, const void* x, std::size_t count, DType dtype, double alpha) override {
    ++scales;
    dispatch_dtype(dtype, [&](auto z) {
      using T = decltype(z);
      for (std::size_t i = 0; i < count; ++i)
        static_cast<T*>(y)[i] = static_cast<T>(alpha) * static_cast<const T*>(x)[i];
    });
  }
  void pin(void*, std::size_t) override { ++pins; }
  void unpin(void*) override { --pins; }
  void synchronize() override { ++synchronizations; }
  DeviceMemoryStats memory_stats() const override { return {}; }
  std::string describe() const override { return "host-backed test device"; }
  int ordinal() const override { return 0; }

 private:
  // Live blocks (shared with the deleters: memory may outlive the runtime's installation).
  std::shared_ptr<std::map<std::byte*, std::size_t>> blocks_ =
      std::make_shared<std::map<std::byte*, std::size_t>>();
};

// Installs a HostBackedRuntime for the scope of a test.
struct InstalledDouble {
  std::shared_ptr<HostBackedRuntime> runtime = std::make_shared<HostBackedRuntime>();
  InstalledDouble() { install_device_runtime(runtime); }
  ~InstalledDouble() { remove_device_runtime(Device::cuda); }
};

}  // namespace dtnn::test
