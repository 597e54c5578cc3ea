// Which of BLIS's kernel sets dtnn asks for (runtime.hpp). A plain function of BLIS's own choice,
// the ISA ceiling and the CPU's vendor, so that the tests can walk every case.
#include <string>
#include <string_view>

#include "dtnn/runtime.hpp"

namespace dtnn {

namespace {

// The instruction-set level a kernel set of Debian's BLIS 0.9 (its x86_64 family) needs.
// sandybridge (AVX without FMA) is above portable and below avx2: it counts as avx2 here, so that
// it never runs under a portable ceiling.
isa::Level level_of(std::string_view set) {
  if (set == "skx" || set == "knl") return isa::Level::avx512;
  if (set == "haswell" || set == "zen" || set == "zen2" || set == "zen3" || set == "sandybridge" ||
      set == "excavator" || set == "steamroller" || set == "piledriver" || set == "bulldozer")
    return isa::Level::avx2;
  return isa::Level::portable;  // penryn (SSSE3), generic
}

// The set dtnn prefers at a level: AVX-512's skx; at AVX2 AMD's zen3 blocking or Intel's haswell
// (the same AVX2 micro-kernels, blocked for each vendor's caches); penryn's SSE kernels below.
std::string best_at(isa::Level level, bool amd) {
  switch (level) {
    case isa::Level::avx512:
      return "skx";
    case isa::Level::avx2:
      return amd ? "zen3" : "haswell";
    case isa::Level::portable:
      break;
  }
  return "penryn";
}

}  // namespace

BlisRequest blis_kernels_to_request(std::string_view own, isa::Level ceiling, bool amd) {
  const std::string ceiling_name = isa::name(ceiling);
  if (level_of(own) > ceiling)
    return {best_at(ceiling, amd),
            "'" + std::string(own) + "' is above the ISA ceiling " + ceiling_name};
  if (own == "generic")
    return {best_at(ceiling, amd), "'generic' is BLIS's answer to a CPU it does not know"};
  // Intel's AVX2 set on a CPU that runs AVX-512 (BLIS 0.9 does not know Sapphire Rapids and
  // later): skx, the kernels of that vector width. AMD's zen sets stay: on AMD Zen 5 they measured
  // as fast as skx (docs/benchmarks.md, session 39).
  if (own == "haswell" && ceiling == isa::Level::avx512)
    return {"skx", "'haswell' runs half the vector width this CPU has"};
  return {"", "its choice fits this CPU and the ISA ceiling " + ceiling_name};
}

}  // namespace dtnn
