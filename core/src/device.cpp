#include "dtnn/device.hpp"

#include <unistd.h>

#include <array>
#include <functional>
#include <mutex>
#include <vector>

#include "dtnn/device_communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/hosts.hpp"
#include "dtnn/registry.hpp"

namespace dtnn {

DeviceRuntime::~DeviceRuntime() = default;

namespace {

struct Installed {
  std::mutex mutex;
  std::array<std::shared_ptr<DeviceRuntime>, 2> runtimes;  // indexed by Device
};

Installed& installed() {
  static Installed* i = new Installed;  // never destroyed: tensors may outlive static destructors
  return *i;
}

}  // namespace

void install_device_runtime(std::shared_ptr<DeviceRuntime> runtime) {
  DTNN_CHECK(runtime && runtime->device() != Device::cpu, "a device runtime for the cpu");
  Installed& i = installed();
  std::lock_guard lock(i.mutex);
  i.runtimes[static_cast<std::size_t>(runtime->device())] = std::move(runtime);
}

void remove_device_runtime(Device d) {
  Installed& i = installed();
  std::lock_guard lock(i.mutex);
  i.runtimes[static_cast<std::size_t>(d)].reset();
}

DeviceRuntime* find_device_runtime(Device d) {
  Installed& i = installed();
  std::lock_guard lock(i.mutex);
  return i.runtimes[static_cast<std::size_t>(d)].get();
}

DeviceRuntime& device_runtime(Device d) {
  DeviceRuntime* r = find_device_runtime(d);
  if (!r)
    throw Error(std::string("no runtime for device '") + to_string(d) +
                "' is open (the experiment opens it when \"device\" is \"" + to_string(d) + "\")");
  return *r;
}

Device parse_device(std::string_view s) {
  if (s == "cpu") return Device::cpu;
  if (s == "cuda") return Device::cuda;
  throw Error("unknown device '" + std::string(s) + "' (expected \"cpu\" or \"cuda\")");
}

double host_key() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return double(std::hash<std::string>{}(name) & ((std::uint64_t{1} << 52) - 1));
}

std::string ranks_sharing_a_device(Communicator& host, int ordinal) {
  const double mine[2] = {host_key(), double(ordinal)};  // the host and the ordinal
  std::vector<double> all(2 * static_cast<std::size_t>(host.size()));
  host.allgather(mine, all.data(), 2, DType::float64, "device ordinals");
  for (int a = 0; a < host.size(); ++a)
    for (int b = a + 1; b < host.size(); ++b)
      if (all[2 * a] == all[2 * b] && all[2 * a + 1] == all[2 * b + 1])
        return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " both use device " +
               std::to_string(int(all[2 * a + 1])) + " of one host";
  return "";
}

}  // namespace dtnn
