// dtnn_bench: steady-state training throughput of an experiment, as a table and as JSON.
//   dtnn_bench EXP.json [--set key=value ...] [--steps 200] [--warmup 20] [--repeats 5] [--profile]
// Each repeat times `steps` training steps (data read, overlapped with the previous step as in
// training; forward, loss, backward, update) after `warmup` untimed ones; the median repeat is
// reported. --profile adds per-layer times.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <vector>

#include "bench_args.hpp"
#include "dtnn/config.hpp"
#include "dtnn/device.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/model.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/trace.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  std::string config_file;
  std::vector<std::string> sets;
  int steps = 200, warmup = 20, repeats = 5;
  bool profile = false, trace_cost = false;
  po::options_description desc("dtnn_bench options");
  desc.add_options()("help,h", "help")("config", po::value(&config_file)->required(),
                                       "experiment file")("set,s", po::value(&sets)->composing(),
                                                          "override a config key (repeatable)")(
      "steps", po::value(&steps), "timed steps per repeat")(
      "warmup", po::value(&warmup), "untimed steps first")("repeats", po::value(&repeats),
                                                           "repeats (the median is reported)")(
      "profile", po::bool_switch(&profile), "per-layer forward/backward times")(
      "trace-cost", po::bool_switch(&trace_cost),
      "alternate repeats without and with the trace recording (dtnn run --trace): both medians "
      "and their ratio");
  try {
    if (!parse_bench_args(argc, argv, desc, "dtnn_bench EXP.json [options]")) return 0;
    dtnn::initialize_runtime();
    sets.push_back("output.progress=\"none\"");
    dtnn::ExperimentConfig cfg = dtnn::load_experiment(config_file, sets);
    dtnn::Registry registry(dtnn::Registry::default_folders());
    dtnn::Experiment e(cfg, registry);
    const std::int64_t batch = cfg.json["training"]["batch_size"].get<std::int64_t>();
    const std::int64_t n = std::min<std::int64_t>(e.trainer().train_size(), batch * 1000);
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::int64_t cursor = 0;
    // As in training, each step names the next batch, which the loader reads meanwhile.
    auto batch_at = [&](std::int64_t at) {
      return std::span<const std::int64_t>(order).subspan(static_cast<std::size_t>(at),
                                                          static_cast<std::size_t>(batch));
    };
    auto step = [&] {
      if (cursor + batch > n) cursor = 0;
      const std::int64_t next = cursor + 2 * batch > n ? 0 : cursor + batch;
      e.trainer().train_step(batch_at(cursor), 1.0, false, batch_at(next));
      cursor += batch;
    };
    // On a GPU a step's work may still run when step() returns: each timing ends once it is done.
    dtnn::DeviceRuntime* device = dtnn::find_device_runtime(e.model().options().device);
    auto finish = [&] {
      if (device) device->synchronize();
    };
    for (int i = 0; i < warmup; ++i) step();
    finish();
    if (profile) e.model().set_profiling(true);
    // Wall time, and process CPU time: on a shared machine time taken by a neighbour inflates the
    // former but not the latter, so CPU ms per step is the steadier figure for comparing variants.
    auto cpu_now = [] {
      timespec ts;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    };
    std::vector<double> rates, cpu_ms, traced_rates;
    std::size_t traced_events = 0;
    for (int r = 0; r < repeats; ++r) {
      for (const bool traced : {false, true}) {
        if (traced && !trace_cost) continue;
        if (traced) dtnn::trace::start({true, std::size_t{1} << 26});
        auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_now();
        for (int i = 0; i < steps; ++i) step();
        finish();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (traced) {
          dtnn::trace::stop();
          traced_events = dtnn::trace::collect().events.size();
          traced_rates.push_back(static_cast<double>(steps * batch) / s);
          continue;
        }
        rates.push_back(static_cast<double>(steps * batch) / s);
        cpu_ms.push_back(1e3 * (cpu_now() - c0) / steps);
      }
    }
    std::sort(cpu_ms.begin(), cpu_ms.end());
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    const dtnn::RuntimeInfo& rt = dtnn::runtime_info();
    const std::string precision = cfg.json["training"]["precision"].get<std::string>();
    const dtnn::Precision products =
        dtnn::parse_precision(precision).value_or(dtnn::Precision::fp32);
    std::printf("model %s, batch %lld, %d threads, BLIS '%s', conv %s, %s %s%s\n",
                e.model().name().c_str(), static_cast<long long>(batch), rt.threads,
                rt.blis_kernels.c_str(), cfg.json["conv"]["algorithm"].get<std::string>().c_str(),
                cfg.json["training"]["dtype"].get<std::string>().c_str(),
                cfg.json["training"]["tensor_format"].get<std::string>().c_str(),
                products == dtnn::Precision::fp32
                    ? ""
                    : (std::string(", products ") + dtnn::to_string(products) + " (" +
                       dtnn::lowp_gemm_path(products) + ")")
                          .c_str());
    if (device) std::printf("device: %s\n", device->describe().c_str());
    std::printf("samples/s per repeat:");
    for (double v : rates) std::printf(" %.0f", v);
    std::printf("\nmedian: %.0f samples/s (%.3f ms/step, %.3f CPU ms/step)\n", median,
                1e3 * static_cast<double>(batch) / median, cpu_ms[cpu_ms.size() / 2]);
    if (profile) std::fputs(e.model().profile_table().c_str(), stdout);
    if (trace_cost) {
      std::sort(traced_rates.begin(), traced_rates.end());
      const double traced = traced_rates[traced_rates.size() / 2];
      std::printf(
          "with the trace recording: samples/s median %.0f (%zu events per repeat); "
          "traced/untraced %.3f\n",
          traced, traced_events, traced / median);
    }
    std::printf(
        "JSON {\"model\": \"%s\", \"batch_size\": %lld, \"threads\": %d, \"blis_kernels\": \"%s\", "
        "\"samples_per_second\": %.1f, \"cpu_ms_per_step\": %.3f, \"repeats\": %d, \"steps\": "
        "%d, \"device\": \"%s\", \"precision\": \"%s\"}\n",
        e.model().name().c_str(), static_cast<long long>(batch), rt.threads,
        rt.blis_kernels.c_str(), median, cpu_ms[cpu_ms.size() / 2], repeats, steps,
        cfg.json["device"].get<std::string>().c_str(), dtnn::to_string(products));
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "dtnn_bench: error: %s\n", ex.what());
    return 1;
  }
  return 0;
}
