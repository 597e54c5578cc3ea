// A fake NVML for nvml's tests: DTNN_FAKE_NVML_DEVICES GPUs (default 2); GPU d's energy counter
// starts at (d + 1) * 1,000,000 mJ and advances 250 mJ * (d + 1) per reading. With
// DTNN_FAKE_NVML_INIT=fail, nvmlInit_v2 fails as on a machine without a driver.
#include <cstdlib>
#include <cstring>

extern "C" {

struct nvmlDevice_st {
  unsigned index;
  unsigned long long readings;
};

namespace {
nvmlDevice_st devices[8] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0}};
}

__attribute__((visibility("default"))) const char* nvmlErrorString(int r) {
  return r == 9 ? "Driver Not Loaded" : "Unknown Error";
}
__attribute__((visibility("default"))) int nvmlInit_v2() {
  const char* init = std::getenv("DTNN_FAKE_NVML_INIT");
  return init && std::strcmp(init, "fail") == 0 ? 9 : 0;
}
__attribute__((visibility("default"))) int nvmlShutdown() { return 0; }
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* n) {
  const char* count = std::getenv("DTNN_FAKE_NVML_DEVICES");
  *n = count ? static_cast<unsigned>(std::atoi(count)) : 2;
  if (*n > 8) *n = 8;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i,
                                                                         nvmlDevice_st** d) {
  if (i >= 8) return 2;
  *d = &devices[i];
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetTotalEnergyConsumption(
    nvmlDevice_st* d, unsigned long long* mj) {
  const unsigned long long per = 250ull * (d->index + 1);
  *mj = (d->index + 1) * 1000000ull + per * d->readings++;
  return 0;
}
}
