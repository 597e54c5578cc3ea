// Conformance by discovery: every plugin the registry finds is checked by its kind's generic
// driver (dtnn/testing/plugin_conformance.hpp) at the cases its traits declare, a dataset that
// reads files on the files its traits describe (dtnn/testing/dataset_fixtures.hpp). A new plugin
// in the tree is checked with no new test code; `dtnn check-plugin` runs the same on a plugin file.
#include <doctest/doctest.h>

#include "dtnn/communicator.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

void check_kind(const std::string& kind) {
  int plugins = 0;
  for (const PluginRecord& r : test::plugins().records()) {
    if (r.kind != kind || r.device != Device::cpu || r.status != PluginRecord::Status::ok) continue;
    ++plugins;
    int checked = 0;
    // The plugin's own cases, and one on each of its fixtures (a dataset's files).
    for (const testing::Check& c : testing::check_plugin(test::plugins(), r)) {
      if (!c.supported) continue;
      ++checked;
      INFO(kind << " " << r.name << ": " << c.what << " at " << c.setting << ": " << c.detail);
      CHECK(c.passed);
    }
    INFO(kind << " " << r.name);
    CHECK(checked > 0);
  }
  CHECK(plugins > 0);
}

}  // namespace

TEST_CASE(
    "conformance: every layer plugin (gradients, dx overwritten, accumulation, partial batch)") {
  check_kind("layer");
}
TEST_CASE("conformance: every optimizer plugin (consumes, descends, any order, state round trip)") {
  check_kind("optimizer");
}
TEST_CASE("conformance: every metric plugin (totals add, finite value, row rules in bounds)") {
  check_kind("metric");
}
TEST_CASE("conformance: every loss plugin (gradient, combined softmax gradient)") {
  check_kind("loss");
}
TEST_CASE("conformance: every dataset plugin (sizes, determinism, one-hot labels, no overrun)") {
  check_kind("dataset");
}
TEST_CASE("conformance: every scheduler plugin (a restored scheduler decides as the first)") {
  check_kind("scheduler");
}
TEST_CASE("conformance: every codec plugin (contraction, adds, error feedback, residuals)") {
  check_kind("codec");
}
TEST_CASE("conformance: the local communicator's collectives (one rank)") {
  LocalCommunicator local;
  for (const testing::Check& c : testing::check_communicator(local)) {
    INFO(c.what << " at " << c.setting);
    CHECK(c.passed);
  }
}
