// dtnn predict's profile reader (read_profile, dtnn/step_cost.hpp): a history JSON with a
// "profile", or the profile object. Any bytes give checked times or a dtnn::Error: a batch of at
// least 1, times finite and >= 0, each layer number once.
#include <cmath>
#include <cstdlib>
#include <set>

#include "dtnn/step_cost.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dtnn::fuzz::expect_clear_errors([&] {
    const dtnn::ProfileTimes p = dtnn::read_profile(dtnn::fuzz::text(data, size), "fuzz.json");
    auto time_ok = [](double ms) { return std::isfinite(ms) && ms >= 0; };
    if (p.batch_size < 1 || !time_ok(p.data_wait_ms) || !time_ok(p.loss_ms) ||
        !time_ok(p.optimizer_ms))
      std::abort();
    std::set<std::int64_t> layers;
    for (const auto& row : p.layers)
      if (!time_ok(row.forward_ms) || !time_ok(row.backward_ms) || row.layer < 0 ||
          !layers.insert(row.layer).second)
        std::abort();
  });
  return 0;
}
