// conv_bench: every ConvAlgorithm plugin, pass by pass, over real layer shapes (simplecnn's and the
// VGG16-CIFAR10 shapes of ../shared/peers/conv_bench.py), batch 64, as a table and as JSON.
//   conv_bench [--algorithms i2c,gemm] [--only scnn] [--batch 64] [--dtype float32] [--layout NHWC]
//              [--min-time 0.3]
// Each point: 2 warm-up calls, then repeats until min-time has passed (at least 5); the median.
// GFLOPS count 2*N*Ho*Wo*K*C*KH*KW per pass (bias excluded), as the PyTorch peer does.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/params.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

namespace {

struct Shape4 {
  const char* label;
  std::int64_t c, k, h, pad;
};
const Shape4 kShapes[] = {{"scnn 1->4@28", 1, 4, 28, 0},      {"scnn 4->8@26", 4, 8, 26, 0},
                          {"vgg 3->64@32", 3, 64, 32, 1},     {"vgg 64->64@32", 64, 64, 32, 1},
                          {"vgg 64->128@16", 64, 128, 16, 1}, {"vgg 128->128@16", 128, 128, 16, 1},
                          {"vgg 128->256@8", 128, 256, 8, 1}, {"vgg 256->256@8", 256, 256, 8, 1},
                          {"vgg 256->512@4", 256, 512, 4, 1}, {"vgg 512->512@4", 512, 512, 4, 1},
                          {"vgg 512->512@2", 512, 512, 2, 1}};

template <class F>
double median_seconds(F&& f, double min_time) {
  f();
  f();
  std::vector<double> t;
  const auto start = Clock::now();
  while (t.size() < 5 || std::chrono::duration<double>(Clock::now() - start).count() < min_time) {
    const auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void fill(dtnn::Tensor& t) {
  dtnn::dispatch_dtype(t.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
      p[i] = static_cast<T>((i * 7919 % 1000) / 1000.0 - 0.5);
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::string algorithms, only, dtype = "float32", layout = "NHWC";
  std::int64_t batch = 64;
  double min_time = 0.3;
  po::options_description desc("conv_bench options");
  desc.add_options()("help,h", "help")("algorithms", po::value(&algorithms),
                                       "comma-separated (default: all)")(
      "only", po::value(&only), "substring filter on the layer label")(
      "batch", po::value(&batch), "batch size")("dtype", po::value(&dtype), "float32 or float64")(
      "layout", po::value(&layout), "NHWC or NCHW")("min-time", po::value(&min_time),
                                                    "seconds per point");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << desc;
      return 0;
    }
    dtnn::initialize_runtime();
    dtnn::Registry registry(dtnn::Registry::default_folders());
    std::vector<std::string> names;
    if (algorithms.empty()) {
      for (const auto& n : registry.available("conv"))
        if (n != "reference") names.push_back(n);
    } else {
      std::stringstream ss(algorithms);
      for (std::string n; std::getline(ss, n, ',');) names.push_back(n);
    }
    const dtnn::RuntimeInfo& rt = dtnn::runtime_info();
    std::printf("batch %lld, %s %s, %d threads, BLIS '%s'\n", static_cast<long long>(batch),
                dtype.c_str(), layout.c_str(), rt.threads, rt.blis_kernels.c_str());
    std::printf("%-17s %-10s %10s %9s %10s %9s %10s %9s\n", "layer", "algorithm", "fwd ms", "GF/s",
                "bwd-data", "GF/s", "bwd-filt", "GF/s");
    std::string json = "[";
    for (const Shape4& s : kShapes) {
      if (!only.empty() && std::string(s.label).find(only) == std::string::npos) continue;
      dtnn::ConvGeometry g;
      g.n = batch, g.h = g.w = s.h, g.c = s.c, g.k = s.k, g.kh = g.kw = 3,
      g.pad_h = g.pad_w = s.pad;
      g.dtype = dtnn::parse_dtype(dtype);
      g.layout = dtnn::parse_layout(layout);
      const double flops = 2.0 * batch * g.ho() * g.wo() * g.k * g.c * 9;
      dtnn::Tensor x = dtnn::Tensor::empty(g.x_shape(batch), g.dtype, g.layout),
                   w = dtnn::Tensor::empty(g.w_shape(), g.dtype, g.layout);
      dtnn::Tensor y = dtnn::Tensor::empty(g.y_shape(batch), g.dtype, g.layout),
                   dx = dtnn::Tensor::empty(x.shape(), g.dtype, g.layout);
      dtnn::Tensor dw = dtnn::Tensor::zeros(w.shape(), g.dtype, g.layout);
      fill(x), fill(w), fill(y);
      for (const auto& name : names) {
        auto algo = registry.create_as<dtnn::ConvAlgorithm>("conv", name, dtnn::Params());
        std::string why;
        if (!algo->supports(g, dtnn::ConvPass::forward, why)) {
          std::printf("%-17s %-10s   not supported: %s\n", s.label, name.c_str(), why.c_str());
          continue;
        }
        algo->prepare(g);
        const double tf = median_seconds([&] { algo->forward(x, w, y); }, min_time);
        const double td = median_seconds([&] { algo->backward_data(y, w, dx); }, min_time);
        const double tw = median_seconds(
                              [&] {
                                algo->forward(x, w, y);
                                algo->backward_filter(x, y, dw);
                              },
                              min_time) -
                          tf;
        std::printf("%-17s %-10s %10.3f %9.1f %10.3f %9.1f %10.3f %9.1f\n", s.label, name.c_str(),
                    tf * 1e3, flops / tf * 1e-9, td * 1e3, flops / td * 1e-9, tw * 1e3,
                    flops / tw * 1e-9);
        char row[400];
        std::snprintf(
            row, sizeof row,
            "%s{\"layer\": \"%s\", \"algorithm\": \"%s\", \"fwd_ms\": %.4f, \"bwd_data_ms\": %.4f, "
            "\"bwd_filter_ms\": %.4f, \"fwd_gflops\": %.1f}",
            json.size() > 1 ? ", " : "", s.label, name.c_str(), tf * 1e3, td * 1e3, tw * 1e3,
            flops / tf * 1e-9);
        json += row;
      }
    }
    std::printf("JSON {\"batch\": %lld, \"threads\": %d, \"rows\": %s]}\n",
                static_cast<long long>(batch), rt.threads, json.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
