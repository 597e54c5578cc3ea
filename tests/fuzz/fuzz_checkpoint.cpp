// dtnn checkpoints (decode_checkpoint) into the tiny model and an SGD optimizer with momentum.
#include "dtnn/checkpoint.hpp"
#include "dtnn/optimizer.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtnn;
  static std::shared_ptr<Optimizer> sgd = [] {
    auto o = fuzz::plugins().create_as<Optimizer>(
        "optimizer", "sgd",
        Params(nlohmann::json{{"learning_rate", 0.1}, {"momentum", 0.9}}, "sgd"));
    o->build(fuzz::tiny_model().parameters());
    return o;
  }();
  fuzz::expect_clear_errors([&] {
    decode_checkpoint(fuzz::text(data, size), "fuzz.dtnn", fuzz::tiny_model(), sgd.get(), "sgd");
  });
  return 0;
}
