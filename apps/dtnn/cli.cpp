// dtnn: the command line (cli.hpp: run() is the program, main.cpp, and `python3 -m dtnn` where
// plugins are written in Python). Thin: parses arguments, then calls the core.
//   dtnn run [EXP.json] [--set key=value ...] [--history FILE] [--trace FILE] [--profile]
//            [PyDTNN flags]
//   dtnn summary [EXP.json] [...]      dtnn plugins [--verbose]      dtnn info
// Exit status: 0 success, 1 error in the experiment (config, data, plugin), 2 bad command line.
#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "command_support.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/config.hpp"
#include "dtnn/config_schema.hpp"
#include "dtnn/device.hpp"
#include "dtnn/executable_dir.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/int8_gemm.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/launcher_flags.hpp"
#include "dtnn/log.hpp"
#include "dtnn/model.hpp"
#include "dtnn/peak.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/testing/conv_perf.hpp"
#include "dtnn/testing/conv_shapes.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "dtnn/vector_width.hpp"
#include "dtnn/version.hpp"

namespace po = boost::program_options;
using nlohmann::json;

namespace {

using dtnn_cli::Common;
using dtnn_cli::UsageError;

// PyDTNN spells flags with underscores (--batch_size); accept both spellings.
std::vector<std::string> normalise(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0) {
      auto eq = a.find('=');
      for (std::size_t j = 2; j < std::min(eq, a.size()); ++j)
        if (a[j] == '_') a[j] = '-';
    }
    out.push_back(a);
  }
  return out;
}

void print_usage() {
  std::cout
      << "dtnn " DTNN_VERSION
         " - distributed deep-learning training\n\n"
         "usage: dtnn run [EXP.json] [options]      train (and evaluate) as the experiment says\n"
         "       dtnn summary [EXP.json] [options]  print the model table and resolved parameters\n"
         "       dtnn plugins [--verbose]           list plugins (with --verbose: their "
         "parameters)\n"
         "       dtnn info                          version, BLIS kernels, threads, plugin "
         "folders\n"
         "       dtnn check-plugin FILE.so [--perf] load a plugin built anywhere and run its "
         "kind's\n"
         "                                          conformance checks (--perf: time a conv\n"
         "                                          algorithm on real layer shapes beside i2c)\n"
         "       dtnn predict EXP.json --ranks 1,2,4,...  [--network "
         "latency_us=L,bandwidth_gbps=B]\n"
         "                                          predicted step time, throughput and scaling\n"
         "                                          of N data-parallel ranks "
         "(docs/observability.md)\n"
         "       dtnn plot HISTORY.json|PREDICT.json  PNG curves: loss and metrics per epoch, or\n"
         "                                          predicted speedup and efficiency\n"
         "       dtnn generate EXP.json --weights FILE --prompt TEXT [--tokens N --temperature T\n"
         "                                          --top-k K]  text sampled from a trained\n"
         "                                          language model (docs/transformers.md)\n"
         "       dtnn quantize EXP.json --weights FILE [--calibration-batches N]\n"
         "                                          an int8 model of the trained weights, for\n"
         "                                          --evaluate-only (docs/precision.md)\n"
         "       dtnn config [--markdown|--flags]   every experiment key's default (--markdown,\n"
         "                                          --flags: docs/config.md's tables)\n"
         "       dtnn --version | --help\n\n"
         "Run `dtnn run --help` for the experiment options.\n";
}

struct RunOutputs {
  std::string history, trace;
};

po::options_description experiment_options(std::vector<std::string>& sets, RunOutputs& outputs,
                                           std::vector<std::string>& flag_values) {
  po::options_description desc("experiment options");
  desc.add_options()("set,s", po::value(&sets)->composing(),
                     "override a config key: --set training.epochs=2 (repeatable)")(
      "history", po::value(&outputs.history),
      "write the training history to this file (JSON for a .json name, else PyDTNN's columns)")(
      "trace", po::value(&outputs.trace),
      "write the run's timeline here: .json (Chrome trace events: Perfetto, chrome://tracing), "
      ".csv (PyDTNN's simple tracer), .prv (Paraver)");
  const auto flags = dtnn::config::flags();
  flag_values.resize(flags.size());
  po::options_description pydtnn(
      "PyDTNN launcher flags (also spelled with underscores; a true/false one may be given bare, "
      "or as --no-FLAG)");
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const dtnn::config::Flag& f = flags[i];
    const std::string help = f.kind == 'r' ? std::string("refused: ") + f.help
                             : f.gate      ? std::string(f.help) + " (needs --" + f.gate + ")"
                                           : std::string(f.help);
    pydtnn.add_options()(f.flag, po::value(&flag_values[i]), help.c_str());
  }
  desc.add(pydtnn);
  return desc;
}

int cmd_run(const std::vector<std::string>& raw_args, bool summary_only) {
  const std::vector<std::string> args = dtnn::config::explicit_booleans(raw_args);
  std::vector<std::string> sets, flag_values;
  std::string config_file;
  RunOutputs outputs;
  Common common;
  po::options_description desc = experiment_options(sets, outputs, flag_values);
  desc.add_options()("help,h", "show this help")("plugin-path",
                                                 po::value(&common.plugin_path)->composing(),
                                                 "extra plugin folder (repeatable)")(
      "config", po::value(&config_file), "experiment file (also the first positional argument)");
  const po::variables_map vm = dtnn_cli::parse_with_config(args, desc);
  if (vm.count("help")) {
    std::cout << "usage: dtnn " << (summary_only ? "summary" : "run") << " [EXP.json] [options]\n"
              << desc;
    return 0;
  }
  std::vector<std::string> overrides = sets;
  const auto flags = dtnn::config::flags();
  std::vector<std::pair<std::string, std::string>> given;
  for (std::size_t i = 0; i < flags.size(); ++i)
    if (vm.count(flags[i].flag)) given.emplace_back(flags[i].flag, flag_values[i]);
  const dtnn::config::FlagSettings settings = dtnn::config::flag_settings(given);
  if (!settings.error.empty()) throw UsageError(settings.error);
  for (const std::string& note : settings.notes)
    std::fprintf(stderr, "dtnn: note: %s\n", note.c_str());
  overrides.insert(overrides.end(), settings.sets.begin(), settings.sets.end());
  if (!outputs.history.empty())
    overrides.push_back("output.history=" + json(outputs.history).dump());
  if (!outputs.trace.empty()) overrides.push_back("output.trace=" + json(outputs.trace).dump());

  dtnn::ExperimentConfig config;
  if (!config_file.empty()) {
    config = dtnn::load_experiment(config_file, overrides);
  } else {
    if (!vm.count("model"))
      throw UsageError("give an experiment file, or at least --model (see dtnn run --help)");
    // The model flag is the base experiment (validated as such); the other flags override it.
    std::string model;
    for (std::size_t i = 0; i < flags.size(); ++i)
      if (std::string_view(flags[i].flag) == "model") model = flag_values[i];
    // A PyDTNN command line: 3.x's learning-rate scaling, and a note of 3.x's other defaults that
    // dtnn does not take.
    if (const std::string note = dtnn::config::pydtnn3_defaults_note(settings.sets); !note.empty())
      std::fprintf(stderr, "dtnn: note: %s\n", note.c_str());
    config = dtnn::make_experiment(dtnn::config::flag_run_base(model), overrides, "command line");
  }
  dtnn::Registry registry = common.registry();
  dtnn::Experiment experiment(config, registry);
  if (summary_only) {
    std::cout << experiment.summary();
    return 0;
  }
  const dtnn::History result = experiment.run();
  if (result.stopped.empty()) return 0;
  std::fflush(stdout);
  if (experiment.rank() == 0) std::fprintf(stderr, "\ndtnn: error: %s\n", result.stopped.c_str());
  return result.exit_code;
}

int cmd_plugins(const std::vector<std::string>& args) {
  Common common;
  bool verbose = false;
  po::options_description desc("plugins options");
  desc.add_options()("verbose,v", po::bool_switch(&verbose),
                     "also show each plugin's parameters and traits")(
      "plugin-path", po::value(&common.plugin_path)->composing(),
      "extra plugin folder (repeatable)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  dtnn::Registry registry = common.registry();
  // The name column fits the longest name; descriptions and parameters line up under FILE.
  int width = 26;
  for (const auto& r : registry.records()) width = std::max(width, static_cast<int>(r.name.size()));
  const int indent = 13 + 1 + width + 1 + 6 + 1 + 12;
  std::printf("%-13s %-*s %-6s %-12s %s\n", "KIND", width, "NAME", "DEVICE", "STATUS",
              "FILE / DESCRIPTION");
  // By kind, name and device: a plugin's twins follow it.
  std::vector<const dtnn::PluginRecord*> records;
  for (const auto& r : registry.records()) records.push_back(&r);
  std::stable_sort(records.begin(), records.end(), [](const auto* a, const auto* b) {
    return std::tie(a->kind, a->name, a->device) < std::tie(b->kind, b->name, b->device);
  });
  for (const dtnn::PluginRecord* record : records) {
    const dtnn::PluginRecord& r = *record;
    std::printf("%-13s %-*s %-6s %-12s %s\n", r.kind.empty() ? "-" : r.kind.c_str(), width,
                r.name.empty() ? "-" : r.name.c_str(),
                r.kind.empty() ? "-" : dtnn::to_string(r.device), dtnn::to_string(r.status),
                r.file.string().c_str());
    std::printf(
        "%-*s %s\n", indent, "",
        r.status == dtnn::PluginRecord::Status::ok ? r.description.c_str() : r.reason.c_str());
    if (verbose && r.status == dtnn::PluginRecord::Status::ok) {
      json p = json::parse(r.parameters);
      if (p.empty()) std::printf("%-*s parameters: none\n", indent, "");
      for (auto it = p.begin(); it != p.end(); ++it)
        std::printf("%-*s   %s = %s\n", indent, "", it.key().c_str(), it.value().dump().c_str());
      const json traits = json::parse(r.traits_json);
      for (auto it = traits.begin(); it != traits.end(); ++it)
        std::printf("%-*s traits.%s = %s\n", indent, "", it.key().c_str(),
                    it.value().dump().c_str());
    }
  }
  return 0;
}

// The perf mode of the harness (dtnn/testing/conv_perf.hpp) for a conv plugin: each pass on the
// layer shapes of `nets`, its forward-plus-backward time beside i2c's and the ratio.
void print_conv_perf(const dtnn::Registry& registry, const std::string& name,
                     const std::vector<std::string>& nets) {
  namespace testing = dtnn::testing;
  std::printf("%-30s %9s %9s %9s %9s %9s %7s\n", "layer (float32 NHWC)", "fwd ms", "bwd-data",
              "bwd-filt", "f+b ms", "i2c f+b", "ratio");
  for (const testing::ConvShape& s : testing::kConvShapes) {
    if (std::find(nets.begin(), nets.end(), s.net) == nets.end()) continue;
    const dtnn::ConvGeometry g =
        testing::geometry_of(s, s.batch, dtnn::DType::float32, dtnn::Layout::nhwc);
    const auto mine = testing::time_conv_algorithm(registry, name, dtnn::Params(), g, 0.1);
    if (!mine.supported) {
      std::printf("%-30s not supported: %s\n", s.label, mine.why_not.c_str());
      continue;
    }
    const auto i2c = testing::time_conv_algorithm(registry, "i2c", dtnn::Params(), g, 0.1);
    std::printf("%-30s %9.3f %9.3f %9.3f %9.3f %9.3f %6.2fx\n", s.label, mine.forward_s * 1e3,
                mine.backward_data_s * 1e3, mine.backward_filter_s * 1e3,
                mine.step_s(s.needs_dx) * 1e3, i2c.step_s(s.needs_dx) * 1e3,
                i2c.step_s(s.needs_dx) / mine.step_s(s.needs_dx));
  }
}

// Loads FILE beside the installed plugins and runs its kind's conformance checks
// (dtnn/testing/plugin_conformance.hpp: a conv algorithm against reference over the geometry
// sweep, a layer's gradients and contracts, an optimizer's, a metric's, a loss's, a dataset's) at
// the cases its traits declare; with --perf, a conv algorithm is then timed on real layer shapes
// beside i2c. Exit 0 only when it loads and every supported check passes.
// dtnn check-plugin FILE.py: plugins written in Python are checked by the dtnn Python package
// (python3 -m dtnn check-plugin FILE.py).
int check_python_plugin(const std::string& file) {
  dtnn_cli::exec_python_dtnn({"check-plugin", file});
}

int cmd_check_plugin(const std::vector<std::string>& args) {
  std::string path, nets = "scnn,resnet20";
  bool perf = false;
  po::options_description desc("check-plugin options");
  desc.add_options()("file", po::value(&path), "the plugin file")(
      "perf", po::bool_switch(&perf), "also time a conv algorithm on real layer shapes")(
      "nets", po::value(&nets), "with --perf: scnn, vgg, resnet20, resnet50 (comma-separated)");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
  po::notify(vm);
  if (path.empty())
    throw UsageError("usage: dtnn check-plugin FILE.so|FILE.py [--perf [--nets vgg]]");
  if (path.size() > 3 && path.ends_with(".py")) return check_python_plugin(path);
  const std::filesystem::path file = std::filesystem::absolute(path);
  if (!std::filesystem::is_regular_file(file)) throw dtnn::Error(path + ": no such plugin file");
  auto folders = dtnn::Registry::default_folders();
  folders.insert(folders.begin(), file);
  dtnn::Registry registry(folders);
  const dtnn::PluginRecord* rec = nullptr;
  for (const auto& r : registry.records())  // loaded first, so a folder's copy is the duplicate
    if (!rec && std::filesystem::equivalent(r.file, file)) rec = &r;
  if (!rec || rec->status != dtnn::PluginRecord::Status::ok)
    throw dtnn::Error(file.string() + ": not loadable: " + (rec ? rec->reason : "not a plugin"));
  std::printf("%s: %s plugin '%s' (%s) loads\n", file.string().c_str(), rec->kind.c_str(),
              rec->name.c_str(), rec->description.c_str());
  int passed = 0, failed = 0, unsupported = 0;
  for (const dtnn::testing::Check& c : dtnn::testing::check_plugin(registry, *rec)) {
    if (!c.supported) {
      ++unsupported;
      continue;
    }
    ++(c.passed ? passed : failed);
    if (!c.passed)
      std::printf("FAIL %s at %s: %s\n", c.what.c_str(), c.setting.c_str(), c.detail.c_str());
  }
  if (passed + failed + unsupported == 0) {
    std::printf("no conformance checks for a %s plugin: it loads\n", rec->kind.c_str());
    return 0;
  }
  std::printf("conformance of %s '%s': %d passed, %d failed, %d not supported\n", rec->kind.c_str(),
              rec->name.c_str(), passed, failed, unsupported);
  if (perf && rec->kind == "conv" && failed == 0) {
    std::vector<std::string> wanted;
    std::stringstream ss(nets);
    for (std::string n; std::getline(ss, n, ',');) wanted.push_back(n);
    print_conv_perf(registry, rec->name, wanted);
  }
  return failed == 0 && passed > 0 ? 0 : 1;
}

// The GPU this process would use, with driver and library versions, or why there is none.
void print_gpus(const dtnn::Registry& registry) {
  const dtnn::PluginRecord* gpu = registry.find("device", "cuda", dtnn::Device::cuda);
  if (!gpu) {
    std::printf("GPU: no device plugin 'cuda' (built without CUDA)\n");
    return;
  }
  if (gpu->status != dtnn::PluginRecord::Status::ok) {
    std::printf("GPU: %s: %s\n", dtnn::to_string(gpu->status), gpu->reason.c_str());
    return;
  }
  auto runtime = registry.create_as<dtnn::DeviceRuntime>("device", "cuda", dtnn::Params(), {},
                                                         dtnn::Device::cuda);
  runtime->open(0, dtnn::Params());
  std::printf("%s\n", runtime->describe().c_str());
}

// What the CPU runs, the ceiling, each kernel family's variant and the measured FP32 peak.
void print_instruction_sets() {
  namespace isa = dtnn::isa;
  std::string features, runs;
  for (const auto& f : isa::cpu_features()) features += " " + f;
  for (isa::Level l : isa::platform_levels())
    if (l <= isa::cpu_level()) runs += std::string(runs.empty() ? "" : ", ") + isa::name(l);
  const char* env = std::getenv("DTNN_ISA");
  std::printf("Instruction sets: this CPU runs %s; ceiling %s (%s)\n  features:%s\n", runs.c_str(),
              isa::describe(isa::ceiling()).c_str(),
              env ? ("DTNN_ISA=" + std::string(env)).c_str() : "DTNN_ISA unset: the CPU's best",
              features.c_str());
  std::printf("Kernel variants (chosen, of those built):\n");
  for (const isa::Choice& c : isa::choices()) {
    std::string built;
    for (isa::Level l : c.built) built += std::string(built.empty() ? "" : ", ") + isa::name(l);
    std::printf("  %-32s %-9s (%s)\n", c.family.c_str(), c.chosen ? isa::name(*c.chosen) : "none",
                built.c_str());
  }
  std::printf("Lower-precision products (training.precision): bf16: %s; fp16: %s\n",
              dtnn::lowp_gemm_path(dtnn::Precision::bf16),
              dtnn::lowp_gemm_path(dtnn::Precision::fp16));
  std::printf("Int8 inference (dtnn quantize): %s\n", dtnn::int8_gemm_path());
  const dtnn::Fp32Peak peak = dtnn::measure_fp32_peak();
  std::printf(
      "FP32 peak (measured): %.0f GFLOPS = %d threads x %d lanes (%s) x 2 flops x %.2f G "
      "vector %s/s",
      peak.gflops, peak.threads, peak.lanes, isa::name(peak.level), peak.fmas_per_second * 1e-9,
      peak.fused ? "FMAs" : "multiply-adds");
  if (peak.nominal_ghz > 0)
    std::printf("; %.2f per cycle at the nominal %.2f GHz", peak.fmas_per_cycle(),
                peak.nominal_ghz);
  std::printf("\n");
}

// The float32 GEMM each ISA level (DTNN_ISA) would run on this CPU: BLIS's kernel set by the
// rules of dtnn::blis_kernels_to_request, and dtnn's own kernels for narrow and shallow products.
void print_gemm_by_level(const dtnn::RuntimeInfo& rt) {
  namespace isa = dtnn::isa;
  std::string levels;
  for (isa::Level l : isa::platform_levels())
    if (const std::string set = dtnn::blis_kernels_at(l); !set.empty() && l <= isa::cpu_level())
      levels += std::string(levels.empty() ? "" : ", ") + isa::name(l) + " BLIS '" + set + "'";
  if (levels.empty())
    levels = "BLIS '" + rt.blis_kernels + "' at every level (" + rt.blis_selection + ")";
  std::printf(
      "float32 GEMM by ISA level: %s; narrow or shallow products (at most %lld outputs wide, or "
      "%lld deep), and on 16-float vectors A B^T of at most %lld rows: dtnn's small-GEMM kernels "
      "at the level chosen above\n",
      levels.c_str(), static_cast<long long>(dtnn::kSmallGemmWidth),
      static_cast<long long>(dtnn::kSmallGemmDepth), static_cast<long long>(dtnn::kSmallGemmRows));
  std::printf("BLIS's small/unpacked (sup) kernels: %s\n", dtnn::blis_sup_policy());
  const dtnn::VectorWidth& w = dtnn::avx512_vector_width();
  std::printf("AVX-512 kernels' vectors: %d bytes (%s)\n", w.bytes, w.decided_by.c_str());
}

// The experiment's keys: their defaults as JSON; with --markdown docs/config.md's key table, with
// --flags its table of PyDTNN's launcher flags.
int cmd_config(const std::vector<std::string>& args) {
  if (args.size() > 1 || (args.size() == 1 && args[0] != "--markdown" && args[0] != "--flags"))
    throw UsageError("usage: dtnn config [--markdown | --flags]");
  if (args.empty())
    std::printf("%s\n", dtnn::experiment_defaults().dump(2).c_str());
  else if (args[0] == "--markdown")
    std::fputs(dtnn::config::markdown_table().c_str(), stdout);
  else
    std::fputs(dtnn::config::flags_markdown().c_str(), stdout);
  return 0;
}

int cmd_info(const std::vector<std::string>& args) {
  Common common;
  po::options_description desc("info options");
  desc.add_options()("plugin-path", po::value(&common.plugin_path)->composing(),
                     "extra plugin folder");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  const dtnn::RuntimeInfo& rt = dtnn::runtime_info();
  dtnn::Registry registry = common.registry();
  auto comm = dtnn::open_communicator("auto", registry, "dtnn info");
  if (comm->rank() == 0) {
    int counts[4] = {0, 0, 0, 0};
    for (const auto& r : registry.records()) ++counts[static_cast<int>(r.status)];
    std::printf("dtnn %s (%s), plugin ABI v%u\n", DTNN_VERSION, DTNN_BUILD_FINGERPRINT,
                dtnn::kPluginAbiVersion);
    std::printf("CPU: %s\n", rt.cpu.c_str());
    print_instruction_sets();
    std::printf("BLIS: %s, kernels '%s' (%s)\n", rt.blis_version.c_str(), rt.blis_kernels.c_str(),
                rt.blis_selection.c_str());
    print_gemm_by_level(rt);
    std::printf("Threads: %d (OpenMP and BLIS)\n", rt.threads);
    std::printf("CUDA toolkit (cuDNN, NCCL): %s at build time\n",
                DTNN_HAVE_CUDA ? "found" : "not found");
    print_gpus(registry);
    std::printf("Plugin folders, in search order:\n");
    for (const auto& f : registry.folders()) {
      std::error_code ec;
      std::printf("  %s%s\n", f.string().c_str(),
                  std::filesystem::is_directory(f, ec) ? "" : " (absent)");
    }
    std::printf("Plugins: %d ok, %d unavailable, %d rejected, %d failed to load\n", counts[0],
                counts[1], counts[2], counts[3]);
  }
  // Every rank's communicator line, in rank order (under mpirun: rank, size, host, MPI library).
  const auto lines = dtnn::allgather_text(*comm, comm->describe(), 255, "info lines");
  if (comm->rank() == 0)
    for (const std::string& text : lines) std::printf("Communicator: %s\n", text.c_str());
  return 0;
}

}  // namespace

namespace dtnn_cli {

namespace {
RegistryExtension& extension() {
  static RegistryExtension e;
  return e;
}
}  // namespace

void set_registry_extension(RegistryExtension e) { extension() = std::move(e); }
const RegistryExtension& registry_extension() { return extension(); }

dtnn::Registry Common::registry() const {
  std::vector<std::string> folders = plugin_path;
  const RegistryExtension& e = registry_extension();
  folders.insert(folders.end(), e.folders.begin(), e.folders.end());
  dtnn::Registry r(dtnn::Registry::default_folders(folders));
  if (e.add) e.add(r);
  for (const auto& w : r.warnings()) dtnn::log_warning(w);
  return r;
}

void exec_python_dtnn(const std::vector<std::string>& args) {
  const std::string python =
      std::getenv("DTNN_PYTHON") ? std::getenv("DTNN_PYTHON") : DTNN_PYTHON_EXECUTABLE;
  // The package: beside the program in the build tree (<build>/python/dtnn), or the program is
  // inside it (pip's layout: site-packages/dtnn/bin/dtnn).
  const std::filesystem::path exe = dtnn::executable_dir();
  std::error_code ec;
  for (const std::filesystem::path& packages : {exe / ".." / "python", exe / ".." / ".."}) {
    if (!std::filesystem::is_regular_file(packages / "dtnn" / "__init__.py", ec)) continue;
    const char* old = std::getenv("PYTHONPATH");
    const std::string path =
        packages.lexically_normal().string() + (old ? ":" + std::string(old) : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
    break;
  }
  ::setenv("DTNN_IN_PYTHON", "1", 1);
  std::vector<std::string> strings = {python, "-m", "dtnn"};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(python.c_str(), argv.data());
  throw dtnn::Error("cannot start " + python +
                    " for plugins written in Python (DTNN_PYTHON names "
                    "the interpreter with the dtnn package): " +
                    std::strerror(errno));
}

int run(int argc, char** argv) {
  std::vector<std::string> args = normalise(argc, argv);
  try {
    dtnn::initialize_runtime();
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      print_usage();
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version" || args[0] == "version") {
      std::printf("dtnn %s\n", DTNN_VERSION);
      return 0;
    }
    const std::string command = args[0];
    args.erase(args.begin());
    if (command == "run") return cmd_run(args, false);
    if (command == "summary") return cmd_run(args, true);
    if (command == "plugins") return cmd_plugins(args);
    if (command == "info") return cmd_info(args);
    if (command == "check-plugin") return cmd_check_plugin(args);
    if (command == "config") return cmd_config(args);
    if (command == "predict") return dtnn_cli::cmd_predict(args);
    if (command == "plot") return dtnn_cli::cmd_plot(args);
    if (command == "generate") return dtnn_cli::cmd_generate(args);
    if (command == "quantize") return dtnn_cli::cmd_quantize(args);
    throw UsageError(
        "unknown command '" + command +
        "' (expected run, summary, plugins, info, check-plugin, config, predict, plot, "
        "generate or quantize)");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "dtnn: error: %s\n", e.what());
    return 2;
  } catch (const po::error& e) {
    std::fprintf(stderr, "dtnn: error: command line: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // dtnn::Error and the rest
    std::fflush(stdout);
    std::fprintf(stderr, "\ndtnn: error: %s%s\n", dtnn::log_rank_prefix().c_str(), e.what());
    // One rank failing must end the job: the others would wait in their next collective.
    if (dtnn::job_has_other_ranks()) dtnn::abort_job(1);
    return 1;
  }
}

}  // namespace dtnn_cli
