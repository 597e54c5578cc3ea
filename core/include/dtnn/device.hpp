// DeviceRuntime: what the core needs from an accelerator, provided by a plugin of kind "device"
// (plugins/cuda/device is "cuda"). The core never links a GPU library: a tensor on Device::cuda
// gets its memory, copies and zeroing from the runtime installed for that device.
//
// One runtime per device kind per process, installed by the experiment once it has opened it
// (one GPU per rank: the rank's local index picks it). Work on the device is ordered on the
// runtime's compute stream; copies to the host return when the host may read the result.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class Params;
class Registry;

struct DeviceMemoryStats {
  std::size_t in_use = 0;               // bytes handed out and not yet returned
  std::size_t reserved = 0;             // bytes obtained from the driver (in use + cached)
  std::size_t peak_in_use = 0;          // the most in use at any time
  std::int64_t driver_allocations = 0;  // calls to the driver's allocator (cudaMalloc) so far
};

class DTNN_CORE_EXPORT DeviceRuntime : public Plugin {
 public:
  ~DeviceRuntime() override;
  virtual Device device() const = 0;
  // Picks this process's device (local_rank modulo the devices present) and applies the run's
  // device options (the experiment's "gpu" object). Called once, before anything else.
  virtual void open(int local_rank, const Params& options) = 0;
  // Device memory, from the runtime's cache; freed back into it when the last owner lets go.
  virtual std::shared_ptr<std::byte> allocate(std::size_t bytes) = 0;
  // bytes from src to dst, either of which may be host memory (the runtime tells which). Ordered
  // after the work already issued; returns once a host destination may be read.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // One batch's host-to-device copies, on the copy stream so that they overlap compute: they wait
  // only for the compute work issued before the PREVIOUS call (callers alternate two device
  // buffers: the one written now was last read by that work), and the compute stream waits for
  // them before its next work. The host memory should be pinned for the copies to be
  // asynchronous; it must stay unchanged until the copies are done (synchronize, or the next
  // call's copies have been waited for by compute that the host waited on).
  struct Upload {
    void* device;
    const void* host;
    std::size_t bytes;
  };
  virtual void upload_async(std::initializer_list<Upload> parts) = 0;
  virtual void fill_zero(void* dst, std::size_t bytes) = 0;
  // y = alpha * x, count elements of dtype, both in device memory (gradient buckets).
  virtual void scale(void* y, const void* x, std::size_t count, DType dtype, double alpha) = 0;
  // Page-locks host memory for asynchronous copies (the batch loader's buffers); unpin undoes it.
  virtual void pin(void* host, std::size_t bytes) = 0;
  virtual void unpin(void* host) = 0;
  virtual void synchronize() = 0;  // waits for all work issued so far
  virtual DeviceMemoryStats memory_stats() const = 0;
  // Lines for `dtnn info` and the run's header: the device, driver and library versions.
  virtual std::string describe() const = 0;
  // The local index of the device this process uses (after open).
  virtual int ordinal() const = 0;
};

// Makes `runtime` the one tensors of its device use; replaces an earlier one.
DTNN_CORE_EXPORT void install_device_runtime(std::shared_ptr<DeviceRuntime> runtime);
// Removes the runtime of d (tensors that hold its memory keep the runtime's allocator alive only
// as long as the runtime keeps it; remove when none is left).
DTNN_CORE_EXPORT void remove_device_runtime(Device d);
// The runtime installed for d, or null (always null for the cpu).
DTNN_CORE_EXPORT DeviceRuntime* find_device_runtime(Device d);
// The runtime installed for d; an Error naming the device when there is none.
DTNN_CORE_EXPORT DeviceRuntime& device_runtime(Device d);

DTNN_CORE_EXPORT Device parse_device(std::string_view s);  // "cpu" | "cuda"

}  // namespace dtnn
