// doctest's main, but a run capped by DTNN_ISA at a level this CPU does not have (ctest runs the
// plugin checks once per level, tests/CMakeLists.txt) reports itself skipped (77), not failed;
// and a run asked for test cases by name (ctest runs each so) that ran none fails: a name CMake
// split (at a ';') would otherwise pass without running anything.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dtnn/isa.hpp"

namespace {

std::atomic<int> g_started{0};

struct CountStarted : doctest::IReporter {
  explicit CountStarted(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++g_started; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("count_started", 1, CountStarted);

}  // namespace

int main(int argc, char** argv) {
  if (const char* wanted = std::getenv("DTNN_ISA")) {
    const auto level = dtnn::isa::parse(wanted);
    if (level && *level > dtnn::isa::cpu_level()) {
      std::printf("skipped: DTNN_ISA=%s, and this CPU runs up to %s\n", wanted,
                  dtnn::isa::name(dtnn::isa::cpu_level()));
      return 77;
    }
  }
  bool by_name = false, listing = false;
  for (int i = 1; i < argc; ++i) {
    by_name |= std::strncmp(argv[i], "--test-case=", 12) == 0;
    listing |= std::strncmp(argv[i], "--list", 6) == 0;
  }
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (result == 0 && by_name && !listing && !context.shouldExit() && g_started == 0) {
    std::printf("error: no test case matched the --test-case filter\n");
    return 1;
  }
  return result;
}
