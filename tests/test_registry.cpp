#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/optimizer.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {
// Whether the registry's ok plugins of kind include every name: a new plugin's folder adds to a
// kind without editing these lists.
bool has_all(const Registry& r, const char* kind, const std::vector<std::string>& names) {
  const std::vector<std::string> found = r.available(kind);
  bool all = true;
  for (const std::string& name : names)
    if (std::find(found.begin(), found.end(), name) == found.end()) {
      MESSAGE("no " << kind << " plugin '" << name << "'");
      all = false;
    }
  return all;
}

const PluginRecord* only_record(const Registry& r) {
  REQUIRE(r.records().size() == 1);
  return &r.records()[0];
}
}  // namespace

TEST_CASE("every shipped plugin loads") {
  const Registry& r = test::plugins();
  CHECK(r.warnings().empty());
  for (const char* layer : {"fc",         "conv2d",
                            "relu",       "sigmoid",
                            "tanh",       "softmax",
                            "flatten",    "dropout",
                            "maxpool2d",  "avgpool2d",
                            "batchnorm",  "leaky_relu",
                            "add",        "concat",
                            "embedding",  "positional_encoding",
                            "layer_norm", "multi_head_attention",
                            "gelu",       "log_softmax"})
    CHECK_MESSAGE(r.find("layer", layer) != nullptr, layer);
  CHECK(has_all(r, "conv", {"best_of", "direct", "i2c", "implicit_gemm", "reference", "winograd"}));
  CHECK(has_all(r, "optimizer", {"adam", "nadam", "rmsprop", "sgd"}));
  CHECK(has_all(r, "scheduler",
                {"early_stopping", "model_checkpoint", "reduce_lr_every_nepochs",
                 "reduce_lr_on_plateau", "stop_at_loss", "warm_up"}));
  CHECK(has_all(r, "dataset",
                {"cifar10", "cifar100", "csv", "folder", "image_labels", "imagenet", "mnist", "npz",
                 "seq2seq", "synthetic", "text", "text_classes"}));
  CHECK(has_all(
      r, "loss",
      {"binary_cross_entropy", "categorical_cross_entropy", "kl_divergence", "mse", "nll"}));
  CHECK(has_all(
      r, "metric",
      {"binary_confusion_matrix", "categorical_accuracy", "categorical_hinge", "categorical_mae",
       "categorical_mse", "f1_score", "multiclass_confusion_matrix", "perplexity", "precision",
       "recall", "regression_mae", "regression_mse", "token_accuracy"}));
  CHECK(has_all(r, "communicator", {"mpi"}));
}

TEST_CASE("a plugin built for another ABI version is rejected with a message that says so") {
  Registry r({std::string(DTNN_TEST_DOUBLES) + "/stale"});
  const PluginRecord* rec = only_record(r);
  CHECK(rec->status == PluginRecord::Status::rejected);
  CHECK(rec->reason.find("stale plugin: built for plugin ABI v0") == 0);
  CHECK(rec->reason.find("this dtnn needs ABI v" + std::to_string(kPluginAbiVersion) +
                         "; rebuild the plugin") != std::string::npos);
  CHECK(r.warnings().size() == 1);
  CHECK(test::error_of([&] {
          r.create("layer", "test_scale", Params());
        }).find("layer_test_stale.so was rejected: stale plugin") != std::string::npos);
}

TEST_CASE("a shared object that is not a plugin is rejected and the rest keeps working") {
  Registry r({std::string(DTNN_TEST_DOUBLES) + "/junk", DTNN_TEST_PLUGIN_DIR});
  CHECK(r.records().front().status == PluginRecord::Status::rejected);
  CHECK(r.records().front().reason == "not a dtnn plugin (no dtnn_plugin_abi_version symbol)");
  CHECK(r.warnings().size() == 1);
  CHECK(r.warnings()[0].find("not_a_plugin.so") != std::string::npos);
  CHECK(r.create_as<Layer>("layer", "relu", Params()) != nullptr);
}

TEST_CASE("a plugin whose probe fails is listed as unavailable, with the probe's reason") {
  Registry r({std::string(DTNN_TEST_DOUBLES) + "/unavailable"});
  const PluginRecord* rec = only_record(r);
  CHECK(rec->status == PluginRecord::Status::unavailable);
  CHECK(rec->name == "test_unavailable");
  CHECK(rec->reason == "no test accelerator on this machine");
  CHECK(test::error_of([&] { r.create("layer", "test_unavailable", Params()); }) ==
        "layer plugin 'test_unavailable' is unavailable on this machine: no test accelerator on "
        "this machine (" +
            rec->file.string() + ")");
}

TEST_CASE("asking for a missing plugin lists the available ones") {
  std::string e = test::error_of([] { test::plugins().create("conv", "fft", Params()); });
  // The list in order, whatever other conv plugins a build adds to it.
  const std::regex listed(
      "no conv plugin named 'fft'; available: (.*, )?best_of, (.*, )?direct, (.*, )?i2c, "
      "(.*, )?implicit_gemm, (.*, )?reference, (.*, )?winograd(, .*)?; searched .*");
  CHECK(std::regex_match(e, listed));
  e = test::error_of([] { test::plugins().create("optimizer", "adma", Params()); });
  CHECK(e.find("(did you mean 'adam'?)") != std::string::npos);
}

TEST_CASE("a plugin folder from DTNN_PLUGIN_PATH is found") {
  setenv("DTNN_PLUGIN_PATH", (std::string("/nonexistent:") + DTNN_TEST_DOUBLES + "/extra").c_str(),
         1);
  Registry r(Registry::default_folders());
  unsetenv("DTNN_PLUGIN_PATH");
  const PluginRecord* rec = r.find("layer", "test_scale");
  REQUIRE(rec != nullptr);
  CHECK(rec->status == PluginRecord::Status::ok);
  CHECK(r.find("layer", "relu") != nullptr);  // the folder beside the executable still counts
  auto layer =
      r.create_as<Layer>("layer", "test_scale", Params(nlohmann::json{{"factor", 3.0}}, "test"));
  CHECK(layer->type() == "test_scale");
}

TEST_CASE("a plugin folder named twice is searched and listed once") {
  const std::string extra = std::string(DTNN_TEST_DOUBLES) + "/extra";
  Registry r({extra, extra + "/", std::string(DTNN_TEST_DOUBLES) + "/../test-doubles/extra"});
  CHECK(r.folders().size() == 1);
  REQUIRE(r.find("layer", "test_scale") != nullptr);
  CHECK(r.warnings().empty());  // the same plugin seen twice would be a duplicate-name warning
}

TEST_CASE("plugin parameters are checked against the plugin's defaults") {
  const Registry& r = test::plugins();
  std::string e = test::error_of([&] {
    r.create("optimizer", "adam",
             Params(nlohmann::json{{"lerning_rate", 0.1}}, "exp.json: optimizer"));
  });
  CHECK(e.find("exp.json: optimizer.lerning_rate: unknown parameter of optimizer 'adam' (did you "
               "mean 'learning_rate'?)") == 0);
  e = test::error_of([&] {
    r.create("optimizer", "adam", Params(nlohmann::json{{"beta1", "high"}}, "exp.json: optimizer"));
  });
  CHECK(e == "exp.json: optimizer.beta1: expected a number, got \"high\"");
  e = test::error_of([&] {
    r.create("optimizer", "sgd", Params(nlohmann::json{{"momentum", 1.5}}, "exp.json: optimizer"));
  });
  CHECK(e == "exp.json: optimizer.momentum: expected a number in [0, 1), got 1.5");
}

TEST_CASE("an object outlives the registry that created it") {
  std::shared_ptr<ConvAlgorithm> algo;
  {
    Registry r({DTNN_TEST_PLUGIN_DIR});
    algo = r.create_as<ConvAlgorithm>("conv", "reference", Params());
  }
  CHECK(algo->name() == "reference");
}

TEST_CASE("an MPI launch without the mpi plugin is an error, not N lone trainings") {
  Registry without_mpi({std::string(DTNN_TEST_DOUBLES) + "/stale"});  // holds no communicator
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  const std::string message =
      test::error_of([&] { open_communicator("auto", without_mpi, "exp.json"); });
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  CHECK(message ==
        "exp.json: parallel.communicator: started by a launcher among 2 processes, but no "
        "communicator plugin that joins them is installed (such as mpi); run without the "
        "launcher, or install one");
  CHECK(open_communicator("auto", without_mpi, "exp.json")->size() == 1);  // no launcher: local
}

TEST_CASE("a plugin's alias (traits.aliases) finds it: implicit_gemm by its former name gemm") {
  const PluginRecord* by_alias = test::plugins().find("conv", "gemm");
  REQUIRE(by_alias != nullptr);
  CHECK(by_alias->name == "implicit_gemm");
  auto algo = test::plugins().create_as<ConvAlgorithm>("conv", "gemm", Params());
  CHECK(algo->name() == "implicit_gemm");
  // The list of what is available gives each plugin once, by its name.
  const auto names = test::plugins().available("conv");
  CHECK(std::count(names.begin(), names.end(), "gemm") == 0);
}

TEST_CASE("every GPU twin declares its CPU plugin's parameters and the traits a run reads alike") {
  // A twin that drifts (a parameter the CPU plugin gained and the twin ignores) fails here, on
  // any machine that builds the CUDA plugins, with or without a GPU.
  const Registry& r = test::plugins();
  int twins = 0;
  for (const PluginRecord& twin : r.records()) {
    if (twin.device != Device::cuda || twin.kind == "device" || twin.kind == "device_communicator")
      continue;
    CAPTURE(twin.kind);
    CAPTURE(twin.name);
    const PluginRecord* cpu = nullptr;
    for (const PluginRecord& c : r.records())
      if (c.device == Device::cpu && c.kind == twin.kind && c.name == twin.name) cpu = &c;
    REQUIRE_MESSAGE(cpu != nullptr, "a twin without a CPU plugin");
    CHECK(nlohmann::json::parse(twin.parameters) == nlohmann::json::parse(cpu->parameters));
    CHECK(twin.traits.maximise == cpu->traits.maximise);  // a metric's direction
    CHECK(twin.traits.softmax == cpu->traits.softmax);    // a layer's softmax, for the loss
    ++twins;
  }
  if (twins == 0) MESSAGE("no CUDA plugins in this build: nothing to compare");
}

TEST_CASE("every GPU layer twin declares the cases the GPU tests check it on") {
  // dtnn_gpu_tests takes each CUDA layer's "twin_checks" (DTNN_CUDA_LAYER): a twin with none
  // would never be compared with its CPU layer.
  for (const PluginRecord& twin : test::plugins().records()) {
    if (twin.device != Device::cuda || twin.kind != "layer") continue;
    CAPTURE(twin.name);
    const nlohmann::json checks =
        nlohmann::json::parse(twin.traits_json).value("twin_checks", nlohmann::json());
    REQUIRE(checks.is_array());
    CHECK(!checks.empty());
    for (const nlohmann::json& c : checks) {
      CHECK(c.contains("input_nchw"));
      for (const auto& [key, value] : c.items()) {  // a misspelt key would be ignored silently
        CAPTURE(key);
        CHECK((key == "params" || key == "input_nchw" || key == "input_range" || key == "tokens" ||
               key == "lengths"));
      }
      CHECK(c.value("params", nlohmann::json::object()).is_object());
      // The CPU layer takes the case's parameters (a misspelt key would fail only on a GPU).
      CHECK_NOTHROW(test::plugins().create(
          "layer", twin.name, Params(c.value("params", nlohmann::json::object()), twin.name)));
    }
  }
}

TEST_CASE("a plugin's traits are read once at load, and a malformed one names its key") {
  const nlohmann::json parameters = {{"filters", 0}};
  const PluginTraits t = read_plugin_traits(nlohmann::json::parse(R"({
      "aliases": ["old"], "alias_defaults": {"old": {"filters": 3}}, "default": true,
      "fuses": [{"option": "x_relu", "absorbs": ["relu"], "into": ["activation"]}],
      "softmax": true, "groups": true, "precisions": ["bf16"], "auto_rank": 3,
      "better": "max"})"),
                                            parameters);
  CHECK(t.aliases == std::vector<std::string>{"old"});
  CHECK(t.alias_defaults.at("old").json() == nlohmann::json{{"filters", 3}});
  CHECK((t.is_default && t.softmax && t.groups && !t.reshape));
  REQUIRE(t.fuses.size() == 1);
  CHECK(t.fuses[0].into == std::vector<std::string>{"activation"});
  CHECK(t.precisions == std::vector<Precision>{Precision::bf16});
  CHECK(t.auto_rank == 3);
  CHECK(t.maximise);
  CHECK(!read_plugin_traits(nlohmann::json{{"better", "min"}}, parameters).maximise);

  auto error = [&](const char* traits) {
    return test::error_of([&] { read_plugin_traits(nlohmann::json::parse(traits), parameters); });
  };
  CHECK(error(R"({"fuses": [{"option": "x", "absorbs": ["relu"], "into": []}]})") ==
        "traits.fuses[0].into: expected a non-empty list of names, got []");
  CHECK(error(R"({"better": "higher"})") ==
        "traits.better: expected \"min\" or \"max\", got \"higher\"");
  CHECK(error(R"({"softmax": "yes"})") == "traits.softmax: expected true or false, got \"yes\"");
  CHECK(error(R"({"precisions": ["fp8"]})").rfind("traits.precisions: expected names of", 0) == 0);
  CHECK(error(R"({"aliases": ["a"], "alias_defaults": {"a": {"filter": 1}}})") ==
        "traits.alias_defaults.a.filter: expected one of its parameters, got \"filter\"");

  // A plugin made in this process with such traits is refused as it is added, by name.
  Registry r(std::vector<std::filesystem::path>{});
  PluginRecord record;
  record.kind = "layer";
  record.name = "odd";
  record.parameters = "{}";
  record.traits_json = R"({"reshape": 1})";
  record.make = [](const Params&, const PluginContext&) -> Plugin* { return nullptr; };
  CHECK(test::error_of([&] { r.add(record); }) ==
        "plugin layer/odd: its traits.reshape: expected true or false, got 1");
}
