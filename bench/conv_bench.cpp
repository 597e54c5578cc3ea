// conv_bench: every ConvAlgorithm plugin, pass by pass, over real layer shapes (conv_shapes.hpp:
// simplecnn, VGG16-CIFAR10, ResNet-20-CIFAR at batch 64, ResNet-50-ImageNet at batch 32), as a
// table and as JSON: time, GFLOPS and workspace bytes of forward, backward-data, backward-filter.
//   conv_bench [--algorithms i2c,winograd] [--nets vgg,resnet20] [--only 512] [--batch N]
//              [--dtype float32] [--layout NHWC] [--precision bf16] [--min-time 0.3]
//              [--param winograd.tile=2]
// Each point: 2 warm-up calls, then repeats until min-time has passed (at least 5); the median.
// GFLOPS count 2*N*Ho*Wo*K*C*KH*KW per pass (bias excluded), as the PyTorch peer does: the
// arithmetic of a direct convolution, whatever the algorithm really does. "peak" is the f+b rate
// (forward, backward-filter and, where the network needs it, backward-data) as a fraction of the
// machine's FP32 peak, measured at the start (dtnn/peak.hpp): the headroom left. Winograd does
// fewer multiplications than it is credited with, so it can pass 100%.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/error.hpp"
#include "dtnn/params.hpp"
#include "dtnn/peak.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/testing/conv_perf.hpp"
#include "dtnn/testing/conv_shapes.hpp"

namespace po = boost::program_options;
namespace testing = dtnn::testing;

namespace {

// "--param winograd.tile=2" -> params["winograd"]["tile"] = 2 (the value is JSON; a bare word is a
// string).
void add_param(std::map<std::string, nlohmann::json>& params, const std::string& spec) {
  const auto dot = spec.find('.'), eq = spec.find('=');
  if (dot == std::string::npos || eq == std::string::npos || eq < dot)
    throw dtnn::Error("--param '" + spec + "': expected ALGORITHM.KEY=VALUE");
  const std::string value = spec.substr(eq + 1);
  nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
  if (v.is_discarded()) v = value;
  params[spec.substr(0, dot)][spec.substr(dot + 1, eq - dot - 1)] = v;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string n; std::getline(ss, n, ',');)
    if (!n.empty()) out.push_back(n);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string algorithms, nets = "scnn,vgg,resnet20,resnet50", only, dtype = "float32",
                          layout = "NHWC", precision = "fp32";
  std::vector<std::string> param_specs;
  std::int64_t batch = 0;
  double min_time = 0.3;
  std::string workspace_policy = "per_layer";
  po::options_description desc("conv_bench options");
  desc.add_options()("help,h", "help")(
      "algorithms", po::value(&algorithms),
      "comma-separated (default: every one but reference and best_of)")(
      "nets", po::value(&nets),
      "comma-separated: scnn, vgg, resnet20, resnet50 (default: these), googlenet5x5, conv2x2")(
      "only", po::value(&only), "substring filter on the layer label")(
      "batch", po::value(&batch), "batch size (default: 64, 32 for resnet50)")(
      "dtype", po::value(&dtype), "float32 or float64")("layout", po::value(&layout),
                                                        "NHWC or NCHW")(
      "precision", po::value(&precision),
      "fp32, bf16 or fp16: the products' precision, for the algorithms that list it "
      "(docs/precision.md)")("min-time", po::value(&min_time), "seconds per point")(
      "workspace", po::value(&workspace_policy),
      "per_layer (default): backward-filter follows forward with the algorithm's workspace as "
      "forward left it (i2c reuses its columns); shared: another layer claimed it in between, "
      "as in a model with conv.workspace \"shared\" (the default)")(
      "param", po::value(&param_specs), "ALGORITHM.KEY=VALUE, a plugin parameter (repeatable)");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
    if (workspace_policy != "per_layer" && workspace_policy != "shared")
      throw std::runtime_error("--workspace is '" + workspace_policy +
                               "'; expected per_layer or shared");
    if (vm.count("help")) {
      std::cout << desc;
      return 0;
    }
    std::map<std::string, nlohmann::json> params;
    for (const auto& spec : param_specs) add_param(params, spec);
    const std::optional<dtnn::Precision> parsed_precision = dtnn::parse_precision(precision);
    if (!parsed_precision)
      throw std::runtime_error("--precision is '" + precision + "'; expected fp32, bf16 or fp16");
    const dtnn::Precision wanted_precision = *parsed_precision;
    dtnn::initialize_runtime();
    dtnn::Registry registry(dtnn::Registry::default_folders());
    std::vector<std::string> names = split(algorithms);
    if (names.empty())
      for (const auto& n : registry.available("conv"))
        if (n != "reference" && n != "best_of") names.push_back(n);
    const std::vector<std::string> wanted_nets = split(nets);
    const dtnn::RuntimeInfo& rt = dtnn::runtime_info();
    const dtnn::Fp32Peak peak = dtnn::measure_fp32_peak();
    std::printf(
        "%s %s, products %s, %d threads, BLIS '%s', workspace %s; FP32 peak %.0f GFLOPS "
        "(measured, %s)\n",
        dtype.c_str(), layout.c_str(), precision.c_str(), rt.threads, rt.blis_kernels.c_str(),
        workspace_policy.c_str(), peak.gflops, dtnn::isa::name(peak.level));
    std::printf("%-30s %-9s %9s %7s %9s %7s %9s %7s %9s %6s %9s\n", "layer", "algorithm", "fwd ms",
                "GF/s", "bwd-data", "GF/s", "bwd-filt", "GF/s", "f+b ms", "peak", "work MiB");
    std::string json = "[";
    for (const testing::ConvShape& s : testing::kConvShapes) {
      if (std::find(wanted_nets.begin(), wanted_nets.end(), s.net) == wanted_nets.end()) continue;
      if (!only.empty() && std::string(s.label).find(only) == std::string::npos) continue;
      const std::int64_t n = batch > 0 ? batch : s.batch;
      const dtnn::ConvGeometry plain =
          testing::geometry_of(s, n, dtnn::parse_dtype(dtype), dtnn::parse_layout(layout));
      const double flops = testing::conv_flops(plain);
      for (const auto& name : names) {
        dtnn::ConvGeometry g = plain;
        if (dtnn::takes_precision(registry, name, wanted_precision)) g.precision = wanted_precision;
        const auto p = params.find(name);
        const testing::ConvTiming t = testing::time_conv_algorithm(
            registry, name,
            p == params.end() ? dtnn::Params() : dtnn::Params(p->second, "--param " + name), g,
            min_time,
            workspace_policy == "shared" ? testing::WorkspacePolicy::shared
                                         : testing::WorkspacePolicy::per_layer);
        if (!t.supported) {
          std::printf("%-30s %-9s   not supported: %s\n", s.label, name.c_str(), t.why_not.c_str());
          continue;
        }
        const double tf = t.forward_s, td = t.backward_data_s, tw = t.backward_filter_s;
        const double total = t.step_s(s.needs_dx);
        const double passes = s.needs_dx ? 3.0 : 2.0;
        const double of_peak = passes * flops / total * 1e-9 / peak.gflops;
        std::printf("%-30s %-9s %9.3f %7.1f %9.3f %7.1f %9.3f %7.1f %9.3f %5.0f%% %9.2f\n", s.label,
                    name.c_str(), tf * 1e3, flops / tf * 1e-9, td * 1e3, flops / td * 1e-9,
                    tw * 1e3, flops / tw * 1e-9, total * 1e3, 100 * of_peak,
                    double(t.workspace_bytes) / (1 << 20));
        std::fflush(stdout);
        nlohmann::json row = {{"layer", s.label},
                              {"net", s.net},
                              {"algorithm", name},
                              {"batch", n},
                              {"needs_dx", s.needs_dx},
                              {"fwd_ms", tf * 1e3},
                              {"bwd_data_ms", td * 1e3},
                              {"bwd_filter_ms", tw * 1e3},
                              {"fwdbwd_ms", total * 1e3},
                              {"fwd_gflops", flops / tf * 1e-9},
                              {"fraction_of_peak", of_peak},
                              {"workspace_bytes", t.workspace_bytes}};
        json += (json.size() > 1 ? ", " : "") + row.dump();
      }
    }
    std::printf(
        "JSON {\"dtype\": \"%s\", \"layout\": \"%s\", \"threads\": %d, \"workspace\": \"%s\", "
        "\"fp32_peak_gflops\": %.1f, \"isa\": \"%s\", \"rows\": %s]}\n",
        dtype.c_str(), layout.c_str(), rt.threads, workspace_policy.c_str(), peak.gflops,
        dtnn::isa::name(dtnn::isa::ceiling()), json.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
