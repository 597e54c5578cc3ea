// doctest's main, but a run capped by DTNN_ISA at a level this CPU does not have (ctest runs the
// plugin checks once per level, tests/CMakeLists.txt) reports itself skipped (77), not failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "dtnn/isa.hpp"

int main(int argc, char** argv) {
  if (const char* wanted = std::getenv("DTNN_ISA")) {
    const auto level = dtnn::isa::parse(wanted);
    if (level && *level > dtnn::isa::cpu_level()) {
      std::printf("skipped: DTNN_ISA=%s, and this CPU runs up to %s\n", wanted,
                  dtnn::isa::name(dtnn::isa::cpu_level()));
      return 77;
    }
  }
  doctest::Context context(argc, argv);
  return context.run();
}
