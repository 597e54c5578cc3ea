// nvml: each NVIDIA GPU's energy since its driver loaded (nvmlDeviceGetTotalEnergyConsumption,
// millijoules; Volta and later), through NVML opened at run time: no CUDA toolkit or driver is
// needed to build it, and where the library or a GPU is missing the source says so.
//   parameter library: NVML's shared object (tests give a fake one).
#include <dlfcn.h>

#include <memory>

#include "dtnn/energy_source.hpp"
#include "dtnn/error.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

// NVML's C interface, as far as it is used here (nvml.h: nvmlReturn_t is an enum, 0 success).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

class Nvml final : public EnergySource {
 public:
  explicit Nvml(const Params& p) : library_(p.get_string("library")) {
    handle_ = ::dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_)
      throw Error("cannot open NVML (" + library_ + "): " + ::dlerror() +
                  " (no NVIDIA driver here)");
    try {
      error_string_ = symbol<const char* (*)(nvmlReturn_t)>("nvmlErrorString");
      auto init = symbol<nvmlReturn_t (*)()>("nvmlInit_v2");
      shutdown_ = symbol<nvmlReturn_t (*)()>("nvmlShutdown");
      auto count = symbol<nvmlReturn_t (*)(unsigned*)>("nvmlDeviceGetCount_v2");
      auto handle =
          symbol<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
      energy_ = symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>(
          "nvmlDeviceGetTotalEnergyConsumption");
      check(init(), "nvmlInit_v2");
      initialised_ = true;
      unsigned n = 0;
      check(count(&n), "nvmlDeviceGetCount_v2");
      if (n == 0) throw Error("NVML sees no GPU");
      for (unsigned i = 0; i < n; ++i) {
        nvmlDevice_t device = nullptr;
        check(handle(i, &device), "nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ")");
        devices_.push_back(device);
        first_mj_.push_back(millijoules(i));
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~Nvml() override { release(); }

  std::string describe() const override { return "nvml (" + library_ + ")"; }

  std::vector<EnergyDomain> domains() const override {
    std::vector<EnergyDomain> out;
    for (std::size_t i = 0; i < devices_.size(); ++i) out.push_back({"gpu-" + std::to_string(i)});
    return out;
  }

  std::vector<double> read() override {
    std::vector<double> joules;
    for (std::size_t i = 0; i < devices_.size(); ++i)
      joules.push_back(static_cast<double>(millijoules(i) - first_mj_[i]) * 1e-3);
    return joules;
  }

 private:
  template <class F>
  F symbol(const char* name) {
    void* s = ::dlsym(handle_, name);
    if (!s) throw Error(library_ + " has no " + name + " (an NVML older than the energy counters)");
    return reinterpret_cast<F>(s);
  }

  void check(nvmlReturn_t r, const std::string& call) const {
    if (r != 0)
      throw Error(call + ": " + (error_string_ ? error_string_(r) : "error") + " (NVML error " +
                  std::to_string(r) + ")");
  }

  unsigned long long millijoules(std::size_t i) const {
    unsigned long long mj = 0;
    check(energy_(devices_[i], &mj),
          "nvmlDeviceGetTotalEnergyConsumption(gpu " + std::to_string(i) + ")");
    return mj;
  }

  void release() {
    if (initialised_ && shutdown_) shutdown_();
    initialised_ = false;
    if (handle_) ::dlclose(handle_);
    handle_ = nullptr;
  }

  std::string library_;
  void* handle_ = nullptr;
  bool initialised_ = false;
  const char* (*error_string_)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*shutdown_)() = nullptr;
  nvmlReturn_t (*energy_)(nvmlDevice_t, unsigned long long*) = nullptr;
  std::vector<nvmlDevice_t> devices_;
  std::vector<unsigned long long> first_mj_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Nvml(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "energy", .name = "nvml",
                   .description = "NVIDIA GPUs' energy from NVML (opened at run time)",
                   .parameters = R"({"library": "libnvidia-ml.so.1"})",
                   .traits = R"({"covers": "gpu", "auto_rank": 0})", .factory = create)
