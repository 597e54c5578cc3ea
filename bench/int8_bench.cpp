// int8_bench: evaluation throughput of a model in float32 and in int8, in one process, alternating.
//   int8_bench EXP.json --weights FLOAT --int8 FILE.int8 [--set key=value ...] [--batch 256]
//              [--batches 20] [--repeats 7] [--profile]
// Two copies of the experiment's model: one with the float weights (a checkpoint), one with the
// int8 model `dtnn quantize` wrote. Each repeat times `batches` forward passes (Mode::eval) of the
// same batch of test samples in each, float first, then int8; the medians and their ratio are
// reported. The data is read once, outside the timing. --profile adds per-layer tables.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "bench_args.hpp"
#include "dtnn/augmentation.hpp"
#include "dtnn/checkpoint.hpp"
#include "dtnn/config.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/int8_gemm.hpp"
#include "dtnn/int8_model.hpp"
#include "dtnn/model.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/trainer.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  std::string config_file, weights, int8_file;
  std::vector<std::string> sets;
  std::int64_t batch = 256;
  int batches = 20, repeats = 7;
  bool profile = false;
  po::options_description desc("int8_bench options");
  desc.add_options()("help,h", "help")("config", po::value(&config_file)->required(),
                                       "experiment file")(
      "weights", po::value(&weights)->required(), "the float model's checkpoint")(
      "int8", po::value(&int8_file)->required(), "the int8 model (dtnn quantize)")(
      "set,s", po::value(&sets)->composing(), "override a config key (repeatable)")(
      "batch", po::value(&batch), "samples per forward pass (default 256)")(
      "batches", po::value(&batches), "forward passes per timing (default 20)")(
      "repeats", po::value(&repeats), "timings of each (the median is reported; default 7)")(
      "profile", po::bool_switch(&profile), "per-layer forward times");
  try {
    if (!parse_bench_args(argc, argv, desc,
                          "int8_bench EXP.json --weights FLOAT --int8 FILE.int8 [options]"))
      return 0;
    dtnn::initialize_runtime();
    for (const char* s :
         {"output.progress=\"none\"", "training.epochs=0", "training.evaluate=false",
          "output.history=\"\"", "training.weights_and_bias_filename=\"\""})
      sets.push_back(s);
    sets.push_back("training.batch_size=" + std::to_string(batch));
    sets.push_back("training.eval_batch_size=" + std::to_string(batch));
    const dtnn::ExperimentConfig cfg = dtnn::load_experiment(config_file, sets);
    dtnn::Registry registry(dtnn::Registry::default_folders());
    dtnn::Experiment fp32(cfg, registry), int8(cfg, registry);
    dtnn::load_checkpoint(weights, fp32.model());
    dtnn::load_int8_model(int8_file, int8.model());

    const dtnn::Dataset& data = fp32.dataset();
    const dtnn::Model& model = fp32.model();
    const std::int64_t n = std::min(batch, data.size(dtnn::Split::test));
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    const dtnn::Layout layout = model.options().layout;
    dtnn::Tensor x =
        dtnn::Tensor::empty(data.sample_shape(layout).with_batch(n), model.options().dtype, layout);
    dtnn::Tensor y =
        dtnn::Tensor::empty(data.label_shape().with_batch(n), model.options().dtype, layout);
    data.read(dtnn::Split::test, idx, x, y);
    dtnn::normalize(x, fp32.trainer().options().augment);

    auto rate = [&](dtnn::Model& m) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int b = 0; b < batches; ++b) m.forward(x, dtnn::Mode::eval);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return static_cast<double>(n * batches) / s;
    };
    rate(fp32.model()), rate(int8.model());  // warm-up: scratch, caches
    if (profile) fp32.model().set_profiling(true), int8.model().set_profiling(true);
    std::vector<double> f, q;
    for (int r = 0; r < repeats; ++r) {
      f.push_back(rate(fp32.model()));
      q.push_back(rate(int8.model()));
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const dtnn::RuntimeInfo& rt = dtnn::runtime_info();
    std::printf("model %s, batch %lld, %d threads, int8 products: %s\n", model.name().c_str(),
                static_cast<long long>(n), rt.threads, dtnn::int8_gemm_path());
    std::printf(
        "float32 %.0f samples/s, int8 %.0f samples/s (medians of %d): int8 / float32 %.2fx\n",
        median(f), median(q), repeats, median(q) / median(f));
    if (profile) {
      std::printf("\nfloat32:\n%s\nint8:\n%s\n", fp32.model().profile_table().c_str(),
                  int8.model().profile_table().c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "int8_bench: %s\n", e.what());
    return 1;
  }
}
