// LayerExtensions: what layers of one model share by name (dtnn/layer_extensions.hpp).
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "dtnn/layer.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {
struct Counter {
  static constexpr std::string_view kExtensionName = "test_counter";
  int value = 0;
};
struct Impostor {  // another type under the same name
  static constexpr std::string_view kExtensionName = "test_counter";
  double value = 0;
};
}  // namespace

TEST_CASE("layer extensions: shared by copies of a context, replaced only in a fork") {
  LayerBuildContext ctx;
  CHECK(ctx.extensions.find<Counter>() == nullptr);
  const LayerBuildContext copy = ctx;  // as a chain hands each layer a copy
  copy.extensions.shared<Counter>().value = 3;
  REQUIRE(ctx.extensions.find<Counter>() != nullptr);
  CHECK(ctx.extensions.find<Counter>()->value == 3);  // made by one layer, found by the next
  CHECK(&ctx.extensions.shared<Counter>() == ctx.extensions.find<Counter>());

  LayerBuildContext scope = ctx;
  scope.extensions = ctx.extensions.fork();
  CHECK(scope.extensions.find<Counter>()->value == 3);  // what was there before the fork
  scope.extensions.set(std::make_shared<Counter>(Counter{7}));
  CHECK(scope.extensions.find<Counter>()->value == 7);
  CHECK(ctx.extensions.find<Counter>()->value == 3);  // the outer scope keeps its own

  CHECK(test::error_of([&] {
          ctx.extensions.find<Impostor>();
        }).find("layer extension 'test_counter' holds a") != std::string::npos);
}
