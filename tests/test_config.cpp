#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include "dtnn/config.hpp"
#include "dtnn/config_schema.hpp"
#include "dtnn/error.hpp"
#include "dtnn/executable_dir.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/launcher_flags.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {
std::filesystem::path write(const std::string& name, const std::string& text) {
  auto p = test::temp_dir("config") / name;
  std::ofstream(p) << text;
  return p;
}
}  // namespace

TEST_CASE("defaults fill every key, comments are allowed") {
  auto p =
      write("ok.json", "// comment\n{\"model\": \"simplecnn\", \"training\": {\"epochs\": 3}}");
  ExperimentConfig c = load_experiment(p, {});
  CHECK(c.json["training"]["epochs"] == 3);
  CHECK(c.json["training"]["batch_size"] == 64);
  CHECK(c.json["conv"]["algorithm"] == "");  // the plugins' default, filled in by Experiment
}

TEST_CASE("a plugin left unnamed is the one that declares itself its kind's default") {
  CHECK(test::plugins().defaults("conv") == std::vector<std::string>{"i2c"});
  CHECK(test::plugins().defaults("optimizer") == std::vector<std::string>{"sgd"});
  CHECK(test::plugins().defaults("metric") == std::vector<std::string>{"categorical_accuracy"});
  const json config = {
      {"model",
       {{"layers",
         {{{"type", "flatten"}}, {{"type", "fc"}, {"units", 3}}, {{"type", "softmax"}}}}}},
      {"dataset",
       {{"name", "synthetic"},
        {"input_shape", {4}},
        {"classes", 3},
        {"train_samples", 6},
        {"test_samples", 3}}}};
  Experiment e(make_experiment(config, {}), test::plugins());
  CHECK(e.config().json["optimizer"]["name"] == "sgd");
  CHECK(e.config().json["loss"] == "categorical_cross_entropy");
  CHECK(e.config().json["conv"]["algorithm"] == "i2c");
  CHECK(e.config().json["metrics"] == json{"categorical_accuracy"});
  // Where no plugin of the kind declares itself the default, the key must be given.
  const Registry no_defaults({std::string(DTNN_TEST_DOUBLES) + "/sleepy"});
  CHECK(no_defaults.defaults("conv").empty());
}

TEST_CASE("an unknown key names the closest valid one") {
  auto p = write("typo.json", R"({"model": "simplecnn", "training": {"batchsize": 32}})");
  CHECK(test::error_of([&] { load_experiment(p, {}); }) ==
        p.string() + ": unknown key 'training.batchsize' (did you mean 'training.batch_size'?)");
}

TEST_CASE("a wrong type names the key, what was expected and what was given") {
  auto p = write("type.json", R"({"model": "simplecnn", "training": {"batch_size": "64"}})");
  CHECK(test::error_of([&] { load_experiment(p, {}); }) ==
        p.string() + ": training.batch_size: expected an integer, got \"64\"");
  auto q = write("range.json", R"({"model": "simplecnn", "dataset": {"validation_split": 1.5}})");
  CHECK(test::error_of([&] {
          load_experiment(q, {});
        }).find("dataset.validation_split: expected a number in [0, 1)") != std::string::npos);
  auto w = write("workspace.json", R"({"model": "simplecnn", "conv": {"workspace": "pooled"}})");
  CHECK(test::error_of([&] { load_experiment(w, {}); }) ==
        w.string() +
            ": conv.workspace: expected \"shared\" (one buffer for all layers) or "
            "\"per_layer\", got \"pooled\"");
}

TEST_CASE("malformed JSON reports file, line and column") {
  auto p = write("bad.json", "{\n  \"model\": \"simplecnn\",\n  \"training\": {\"epochs\": 3,}\n}");
  std::string e = test::error_of([&] { load_experiment(p, {}); });
  CHECK(e.find(p.string() + ":3:") == 0);
  CHECK(e.find("invalid JSON") != std::string::npos);
}

TEST_CASE("a missing file is named") {
  CHECK(test::error_of([] { load_experiment("/nonexistent/exp.json", {}); }) ==
        "/nonexistent/exp.json: cannot open (No such file or directory)");
}

TEST_CASE("--set overrides parse values as JSON, else as strings") {
  json c = json::object();
  apply_override(c, "training.batch_size=32");
  apply_override(c, "optimizer.learning_rate=0.5");
  apply_override(c, "training.tensor_format=NCHW");
  apply_override(c, "training.evaluate=false");
  CHECK(c["training"]["batch_size"] == 32);
  CHECK(c["optimizer"]["learning_rate"] == 0.5);
  CHECK(c["training"]["tensor_format"] == "NCHW");
  CHECK(c["training"]["evaluate"] == false);
  CHECK(test::error_of([&] { apply_override(c, "foo"); }) ==
        "--set expects key=value (e.g. training.epochs=2), got 'foo'");
  auto p = write("set.json", R"({"model": "simplecnn"})");
  CHECK(test::error_of([&] { load_experiment(p, {"training.epochs=two"}); }) ==
        "command line: training.epochs: expected an integer, got \"two\"");
}

TEST_CASE("model names resolve to configs/models") {
  CHECK(resolve_model_path("simplecnn", "").filename() == "simplecnn.json");
  CHECK(test::error_of([] {
          resolve_model_path("nosuchmodel", "exp.json");
        }).find("exp.json: model: cannot find 'nosuchmodel'") == 0);
}

TEST_CASE("the core library's folder is where the zoo of a moved install is looked for") {
  // A Python package installed by pip has lib/ and share/ inside it, and python3 as its program.
  const std::filesystem::path lib = core_library_dir();
  REQUIRE(!lib.empty());
  bool core = false;
  for (const auto& entry : std::filesystem::directory_iterator(lib))
    core = core || entry.path().filename().string().starts_with("libdtnn_core.so");
  CHECK(core);
}

TEST_CASE("closest_match") {
  CHECK(closest_match("lerning_rate", {"learning_rate", "momentum"}) == "learning_rate");
  CHECK(closest_match("zzzzzz", {"learning_rate", "momentum"}).empty());
}

TEST_CASE("metrics are names or objects with parameters, a bad entry or parameter is named") {
  auto ok = write("metrics.json", R"({"model": "simplecnn",
      "metrics": ["categorical_accuracy", {"name": "recall", "positive_class": 3}]})");
  CHECK(load_experiment(ok, {}).json["metrics"][1]["positive_class"] == 3);
  auto bad =
      write("metrics_bad.json", R"({"model": "simplecnn", "metrics": [{"positive_class": 3}]})");
  CHECK(test::error_of([&] {
          load_experiment(bad, {});
        }).find("metrics[0]: expected a metric name, or {\"name\": ..., parameters...}") !=
        std::string::npos);
}

TEST_CASE("docs/config.md's key table is the schema's, and the schema's defaults are valid") {
  std::ifstream in(std::string(DTNN_TEST_SOURCE_DIR) + "/docs/config.md");
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(docs.find(config::markdown_table()) !=
        std::string::npos);  // regenerate: dtnn config --markdown
  CHECK(docs.find(config::flags_markdown()) !=
        std::string::npos);  // regenerate: dtnn config --flags
  for (const config::Key& k : config::keys()) {
    CAPTURE(k.path);
    CHECK(k.rule.allows(config::default_of(k)));
    CHECK(std::string(k.meaning).size() > 0);
  }
  // A rule's refusal names the key and what it expects.
  json c = {{"model", "simplecnn"}, {"training", {{"threads", 2000}}}};
  CHECK(test::error_of([&] { make_experiment(c, {}); }) ==
        "config: training.threads: expected an integer in [0, 1024] (0: all cores), got 2000");
  c = {{"model", "simplecnn"}, {"output", {{"progress", "fancy"}}}};
  CHECK(test::error_of([&] { make_experiment(c, {}); }) ==
        "config: output.progress: expected \"auto\", \"bar\", \"lines\" or \"none\", got "
        "\"fancy\"");
}

// The launcher flag kind that parses a value of j's JSON type: 'i', 'f', 'b' or 's' ('?' if none).
char kind_of(const json& j) {
  return j.is_number_integer() ? 'i'
         : j.is_number()       ? 'f'
         : j.is_boolean()      ? 'b'
         : j.is_string()       ? 's'
                               : '?';
}

TEST_CASE(
    "every launcher flag sets a key of the schema or a plugin's parameter, and parses its kind") {
  std::set<std::string> schema;
  for (const config::Key& k : config::keys()) schema.insert(k.path);
  for (const config::Flag& f : config::flags()) {
    CAPTURE(f.flag);
    const std::string key = f.key;
    const bool keyless = f.kind == 'r' || f.kind == '-' || f.kind == 't' || f.kind == '~';
    CHECK(keyless == key.empty());
    if (keyless) {
      CHECK(std::string(f.help).size() > 10);  // the reason
      continue;
    }
    if (key.rfind("schedulers/", 0) == 0) {  // schedulers/<name>.<parameter>: that plugin's
      const std::string name = key.substr(11, key.find('.') - 11);
      const PluginRecord* r = test::plugins().find("scheduler", name);
      REQUIRE(r);
      CHECK(json::parse(r->parameters).contains(key.substr(key.find('.') + 1)));
      continue;
    }
    if (key == "parallel.codec.name") continue;  // a plugin choice's name
    if (key.rfind("parallel.codec.", 0) == 0) {  // a codec's parameter: ckks's or oktopk's
      bool known = false;
      for (const char* name : {"ckks", "oktopk"})
        if (const PluginRecord* r = test::plugins().find("codec", name))
          known = known || json::parse(r->parameters).contains(key.substr(15));
      if (test::plugins().find("codec", "ckks")) CHECK_MESSAGE(known, key);
      continue;
    }
    if (key.rfind("parallel.communicator.", 0) == 0) {  // the name, or tcp's or mqtt's parameter
      const std::string parameter = key.substr(22);
      bool known = parameter == "name";
      for (const char* name : {"tcp", "mqtt"})
        if (const PluginRecord* r = test::plugins().find("communicator", name))
          known = known || json::parse(r->parameters).contains(parameter);
      CHECK_MESSAGE(known, parameter);
      continue;
    }
    const bool open = key.rfind("dataset.", 0) == 0 || key.rfind("optimizer.", 0) == 0 ||
                      key.rfind("fusion.", 0) == 0 || key.rfind("conv.", 0) == 0 ||
                      key.rfind("loss.", 0) == 0;
    CHECK((schema.count(key) == 1 || open));
    if (f.gate) CHECK(config::find_flag(f.gate));
    // A flag that passes its value on as it is parses it as the key's type.
    const auto k = std::find_if(config::keys().begin(), config::keys().end(),
                                [&](const config::Key& s) { return key == s.path; });
    if (k != config::keys().end() && std::string("sifb").find(f.kind) != std::string::npos)
      CHECK(f.kind == kind_of(config::default_of(*k)));
  }
  std::string why;
  const config::Flag batch{"batch-size", "training.batch_size", 'i', ""};
  CHECK(config::flag_assignment(batch, "32", why) == "training.batch_size=32");
  CHECK_FALSE(config::flag_assignment(batch, "abc", why));
  CHECK(why == "--batch-size: expected an integer, got 'abc'");
  CHECK(config::flag_assignment(*config::find_flag("enable_gpu"), "True", why) ==
        "device=\"cuda\"");
  CHECK(config::flag_assignment(*config::find_flag("synthetic-input-shape"), "3,32,16", why) ==
        "dataset.input_shape=[32,16,3]");
  CHECK(config::flag_assignment(*config::find_flag("non-blocking-mpi"), "yes", why) ==
        "parallel.blocking=false");
  CHECK(config::flag_assignment(*config::find_flag("metrics"), "a,b", why) ==
        "metrics=[\"a\",\"b\"]");
}

// The flags of tests/pydtnn_flags/NAME, one per line ('#' lines are comments).
std::vector<std::string> pydtnn_flags(const std::string& name) {
  std::ifstream in(std::string(DTNN_TEST_SOURCE_DIR) + "/tests/pydtnn_flags/" + name);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

TEST_CASE(
    "every flag of PyDTNN 1.x's and 3.x's parsers is parsed: to its key, or refused saying why") {
  const auto one = pydtnn_flags("1x.txt"), three = pydtnn_flags("3x.txt");
  CHECK(one.size() == 75);
  CHECK(three.size() == 129);
  int refused = 0;
  for (const auto* list : {&one, &three})
    for (const std::string& name : *list) {
      CAPTURE(name);
      const config::Flag* f = config::find_flag(name);
      REQUIRE(f);
      const std::string value = config::is_boolean(*f)             ? "true"
                                : f->kind == 'i' || f->kind == '~' ? "3"
                                : f->kind == 'f'                   ? "0.5"
                                : f->kind == 'v'                   ? "1,2"
                                : f->kind == 'c'                   ? "3,8,8"
                                                                   : "x";
      std::string why;
      const auto set = config::flag_assignment(*f, value, why);
      if (f->kind == 'r') {
        ++refused;
        CHECK_FALSE(set);
        CHECK(why == "--" + std::string(f->flag) + " is not supported: " + f->help);
        continue;
      }
      REQUIRE(set);
      if (!std::string(f->key).empty() && !(f->kind == 'g' && !f->on))
        CHECK(set->rfind(std::string(f->key) + "=", 0) == 0);
    }
  CHECK(refused > 0);
}

TEST_CASE("PyDTNN's boolean forms: bare, --no-FLAG, and 1.x's --FLAG True") {
  const std::vector<std::string> args{"x.json",
                                      "--evaluate",
                                      "--no-test-as-validation",
                                      "--evaluate_only",
                                      "True",
                                      "--batch-size",
                                      "3",
                                      "--no_shared_data",
                                      "--no-such",
                                      "--tracing=false"};
  CHECK(config::explicit_booleans(args) ==
        std::vector<std::string>{"x.json", "--evaluate=true", "--test-as-validation=false",
                                 "--evaluate_only=True", "--batch-size", "3", "--shared-data=false",
                                 "--no-such", "--tracing=false"});
  // A refused flag's number is its value, not a stray experiment file.
  CHECK(config::explicit_booleans({"--crop-images-size", "24", "x.json"}) ==
        std::vector<std::string>{"--crop-images-size=24", "x.json"});
  // A fraction of a second is a timeout too.
  CHECK(make_experiment(json{{"model", "simplemlp"}}, {"parallel.timeout_s=0.5"}, "t")
            .json["parallel"]["timeout_s"] == 0.5);
}

TEST_CASE("flag settings: schedulers and their parameters, gates, conflicts, refusals, notes") {
  auto settings = [](std::vector<std::pair<std::string, std::string>> given) {
    return config::flag_settings(given);
  };
  auto s = settings({{"schedulers", "warm_up,early_stopping"},
                     {"warm-up-epochs", "3"},
                     {"early-stopping-patience", "4"},
                     {"early-stopping-minimize", "false"}});
  CHECK(s.error == "");
  REQUIRE(s.sets.size() == 1);
  CHECK(json::parse(s.sets[0].substr(s.sets[0].find('=') + 1)) ==
        json::parse(R"([{"name": "warm_up", "warmup_epochs": 3},
                        {"name": "early_stopping", "patience": 4, "mode": "max"}])"));
  CHECK(settings({{"early-stopping-patience", "4"}}).error ==
        "--early-stopping-patience sets a parameter of the early_stopping scheduler, which "
        "--schedulers does not name (give --schedulers early_stopping)");

  s = settings({{"augment-crop-perc", "0.9"}});
  CHECK(s.sets.empty());
  CHECK(s.notes == std::vector<std::string>{
                       "--augment-crop-perc has no effect without --augment-crop (as in PyDTNN)"});
  s = settings({{"augment-crop", "true"}, {"augment-crop-perc", "0.9"}});
  CHECK(s.sets == std::vector<std::string>{"dataset.transform_central_crop=0.9"});
  CHECK(settings({{"augment-crop", "true"}}).error ==
        "--augment-crop: give the value it turns on (--augment-crop-perc)");

  CHECK(settings({{"seed", "1"}, {"random-seed", "2"}}).error ==
        "--random-seed and --seed both set training.seed, differently (2 and 1)");
  CHECK(settings({{"seed", "1"}, {"random-seed", "1"}}).error == "");
  CHECK(settings({{"use-mpi-buffers", "true"}})
            .error.starts_with(
                "--use-mpi-buffers is not supported: dtnn always exchanges flat buffers"));
  CHECK(settings({{"shared-data", "false"}}).sets ==
        std::vector<std::string>{"parallel.shared_data=false"});
  CHECK(settings({{"shared-storage", "false"}})
            .notes.at(0)
            .starts_with("--shared-storage has no effect: every rank reads"));
  s = settings({{"use-cudnn", "false"}, {"loss-func", "negative_log_likelihood"}});
  CHECK(s.notes == std::vector<std::string>{"--use-cudnn has no effect: cuDNN is used whenever "
                                            "the run is on the GPU (--enable-gpu)"});
  CHECK(s.sets == std::vector<std::string>{"loss.name=\"negative_log_likelihood\""});

  // --use-loss-weights alone: the weights of the training split's class frequencies (3.x's).
  CHECK(settings({{"use-loss-weights", "true"}}).sets ==
        std::vector<std::string>{"loss.weights=\"frequency\""});
  CHECK(settings({{"use-loss-weights", "true"}, {"loss-weights", "1,2"}}).sets ==
        std::vector<std::string>{"loss.weights=[1,2]"});
  CHECK(settings({{"loss-eps", "1e-8"}}).sets == std::vector<std::string>{"loss.eps=1e-08"});

  // PyDTNN 3.x's Ok-Topk optimizer: sgd over the oktopk codec, with its parameters.
  s = settings({{"optimizer", "oktopk"},
                {"optimizer-density", "0.05"},
                {"optimizer-tau", "8"},
                {"optimizer-tau-prime", "4"},
                {"oktopk-min-k", "2"}});
  CHECK(s.error == "");
  CHECK(s.notes.at(0).starts_with("--optimizer oktopk: dtnn's sgd with the oktopk codec"));
  const ExperimentConfig e = make_experiment(json{{"model", "simplemlp"}}, s.sets, "t");
  CHECK(e.json["optimizer"]["name"] == "sgd");
  CHECK(e.json["parallel"]["codec"] ==
        json::parse(R"({"name": "oktopk", "density": 0.05, "tau": 8, "tau_prime": 4,
                        "min_k": 2})"));

  // --encryption: tenseal is the ckks codec; openfhe is refused, saying why and what does run.
  CHECK(settings({{"encryption", "tenseal"}}).sets ==
        std::vector<std::string>{"parallel.codec.name=\"tenseal\""});
  const std::string openfhe = settings({{"encryption", "openfhe"}}).error;
  CHECK(openfhe.starts_with("--encryption openfhe: OpenFHE is not in dtnn"));
  CHECK(openfhe.find("--encryption tenseal") != std::string::npos);
}

TEST_CASE("PyDTNN's other model names resolve to the zoo's files") {
  CHECK(resolve_model_path("vgg11", "").filename() == "vgg11.json");  // 3.x's; 1.x's at 224
  CHECK(resolve_model_path("resnet50v15_imagenet", "").filename() == "resnet50_imagenet.json");
  CHECK(resolve_model_path("mobilenetv2_pytorch", "").filename() == "mobilenetv2.json");
  CHECK(resolve_model_path("resnet50_pytorch", "").filename() == "resnet50_pytorch.json");
  CHECK(resolve_model_path("vgg3", "").filename() == "vgg3.json");
  CHECK(test::error_of([] {
          resolve_model_path("vgg99", "");
        }).starts_with("config: model: cannot find 'vgg99'"));
}
