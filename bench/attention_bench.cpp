// attention_bench: forward + backward of the multi_head_attention layer plugin on one shape, the
// median of --repeats (after --warmup), as a line of JSON like bench/torch_transformer.py
// attention's, which times PyTorch's nn.MultiheadAttention the same way.
//   attention_bench --seq 128 [--batch 32 --dim 128 --heads 4 --causal --kernel auto
//                    --repeats 10 --warmup 3]
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dtnn/layer.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  std::int64_t seq = 128, batch = 32, dim = 128, heads = 4;
  int repeats = 10, warmup = 3;
  bool causal = false;
  std::string kernel = "auto";
  po::options_description desc("attention_bench options");
  desc.add_options()("help,h", "help")("seq", po::value(&seq), "sequence length")(
      "batch", po::value(&batch), "sequences per batch")("dim", po::value(&dim), "model width")(
      "heads", po::value(&heads), "attention heads")("causal", po::bool_switch(&causal),
                                                     "causal mask")(
      "kernel", po::value(&kernel), "the layer's \"kernel\": auto, stored or fused")(
      "repeats", po::value(&repeats), "timed repeats (the median is reported)")(
      "warmup", po::value(&warmup), "untimed repeats first");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::printf("usage: attention_bench --seq N [options]\n");
      return 0;
    }
    dtnn::initialize_runtime();
    dtnn::Registry registry(dtnn::Registry::default_folders());
    auto layer = registry.create_as<dtnn::Layer>(
        "layer", "multi_head_attention",
        dtnn::Params(nlohmann::json{{"heads", heads}, {"causal", causal}, {"kernel", kernel}},
                     "attention_bench"));
    dtnn::LayerBuildContext ctx;
    ctx.input_shape = dtnn::Shape{seq, dim};
    ctx.max_batch = batch;
    ctx.registry = &registry;
    layer->build(ctx);
    const dtnn::Shape shape{batch, seq, dim};
    auto x = dtnn::Tensor::empty(shape, dtnn::DType::float32);
    auto y = dtnn::Tensor::empty(shape, dtnn::DType::float32);
    auto dy = dtnn::Tensor::empty(shape, dtnn::DType::float32);
    auto dx = dtnn::Tensor::empty(shape, dtnn::DType::float32);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      x.data<float>()[i] = float(std::sin(0.01 * double(i)));
      dy.data<float>()[i] = float(std::cos(0.013 * double(i)));
    }
    std::vector<double> times;
    for (int r = 0; r < warmup + repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      layer->forward(x, y, dtnn::Mode::train);
      layer->backward(x, y, dy, &dx);
      if (r >= warmup)
        times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double ms = 1e3 * times[times.size() / 2];
    std::printf("JSON %s\n", nlohmann::json{{"seq", seq},
                                            {"batch", batch},
                                            {"dim", dim},
                                            {"heads", heads},
                                            {"causal", causal},
                                            {"threads", dtnn::runtime_info().threads},
                                            {"ms", ms},
                                            {"tokens_per_s", double(batch * seq) / (ms / 1e3)}}
                                 .dump()
                                 .c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention_bench: error: %s\n", e.what());
    return 1;
  }
}
