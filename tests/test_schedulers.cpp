// Schedulers: each one against a hand-computed sequence of learning rates, stops and saves; the
// metric convention; and state() / set_state() resuming exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "dtnn/checkpoint.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/scheduler.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<Scheduler> scheduler(const std::string& name, json params = json::object()) {
  return test::plugins().create_as<Scheduler>("scheduler", name,
                                              Params(params, "exp.json: schedulers[0]"), {"name"});
}

// A tiny model and an sgd optimizer for the schedulers to act on.
struct Rig {
  Model model;
  std::shared_ptr<Optimizer> sgd;
  TrainingState state;
  explicit Rig(double lr = 0.1)
      : model(parse_model_spec(
                  json::parse(R"({"name": "rig", "layers": [{"type": "fc", "units": 2}]})"), "rig"),
              ModelOptions{}, Shape{3}, test::plugins()),
        sgd(test::plugins().create_as<Optimizer>(
            "optimizer", "sgd", Params(json{{"learning_rate", lr}}, "test: optimizer"), {})) {
    sgd->build(model.parameters());
    state.optimizer = sgd.get();
    state.model = &model;
    for (const PluginRecord& r : test::plugins().records())  // as Experiment gives the trainer
      if (r.kind == "metric" && r.traits.maximise) state.maximised.insert(r.name);
  }
  // Ends epoch `e` (0-based) with these logs.
  void end_epoch(Scheduler& s, std::int64_t e, std::map<std::string, double> logs) {
    state.epoch = e;
    state.logs = std::move(logs);
    s.on_epoch_end(state);
  }
};

}  // namespace

TEST_CASE("warm_up ramps from lr / ranks to lr over warmup_epochs") {
  Rig rig(0.1);
  rig.state.ranks = 4;
  auto s = scheduler("warm_up", {{"warmup_epochs", 4}});
  s->on_train_begin(rig.state);
  CHECK(rig.sgd->learning_rate() == doctest::Approx(0.025));
  const double expected[] = {
      0.025 + 0.25 * 0.075, 0.025 + 0.5 * 0.075, 0.025 + 0.75 * 0.075, 0.1, 0.1, 0.1};
  for (int e = 0; e < 6; ++e) {
    rig.end_epoch(*s, e, {});
    CHECK(rig.sgd->learning_rate() == doctest::Approx(expected[e]));
  }
}

TEST_CASE("reduce_lr_every_nepochs multiplies every nepochs, never below min_lr") {
  Rig rig(1.0);
  auto s = scheduler("reduce_lr_every_nepochs", {{"factor", 0.5}, {"nepochs", 2}, {"min_lr", 0.2}});
  const double expected[] = {1.0, 0.5, 0.5, 0.25, 0.25, 0.25 /* 0.125 < min_lr */, 0.25};
  for (int e = 0; e < 7; ++e) {
    rig.end_epoch(*s, e, {});
    CHECK(rig.sgd->learning_rate() == doctest::Approx(expected[e]));
  }
}

TEST_CASE("reduce_lr_on_plateau reduces after patience epochs without improvement") {
  Rig rig(1.0);
  auto s =
      scheduler("reduce_lr_on_plateau", {{"metric", "val_loss"}, {"factor", 0.1}, {"patience", 2}});
  //                    improves  improves  same  worse -> x0.1  worse  worse -> x0.1
  const double losses[] = {1.0, 0.8, 0.8, 0.9, 0.85, 0.9};
  const double lrs[] = {1.0, 1.0, 1.0, 0.1, 0.1, 0.01};
  for (int e = 0; e < 6; ++e) {
    rig.end_epoch(*s, e, {{"val_loss", losses[e]}});
    CHECK(rig.sgd->learning_rate() == doctest::Approx(lrs[e]));
  }
}

TEST_CASE("stop_at_loss stops once the metric passes the threshold, by the metric's direction") {
  Rig rig;
  auto acc =
      scheduler("stop_at_loss", {{"metric", "val_categorical_accuracy"}, {"threshold", 0.5}});
  rig.end_epoch(*acc, 0, {{"val_categorical_accuracy", 0.4}});
  CHECK(!rig.state.stop_training);
  rig.end_epoch(*acc, 1, {{"val_categorical_accuracy", 0.6}});
  CHECK(rig.state.stop_training);

  Rig rig2;
  auto loss = scheduler("stop_at_loss", {{"metric", "loss"}, {"threshold", 0.5}});
  rig2.end_epoch(*loss, 0, {{"loss", 0.6}});
  CHECK(!rig2.state.stop_training);
  rig2.end_epoch(*loss, 1, {{"loss", 0.4}});
  CHECK(rig2.state.stop_training);
}

TEST_CASE("early_stopping stops after patience epochs and restores the best epoch's weights") {
  Rig rig;
  auto s = scheduler("early_stopping", {{"metric", "val_categorical_accuracy"}, {"patience", 2}});
  const double accuracy[] = {0.5, 0.7, 0.6, 0.65};
  for (int e = 0; e < 4; ++e) {
    for (const auto& p : rig.model.parameters())  // epoch e leaves every weight at e + 1
      std::fill(p.value.data<float>(), p.value.data<float>() + p.value.numel(), float(e + 1));
    rig.end_epoch(*s, e, {{"val_categorical_accuracy", accuracy[e]}});
    CHECK(rig.state.stop_training == (e == 3));
  }
  for (const auto& p : rig.model.parameters())
    for (std::int64_t i = 0; i < p.value.numel(); ++i) CHECK(p.value.data<float>()[i] == 2.0f);
}

TEST_CASE("model_checkpoint writes on improvement every save_freq epochs and keeps only the last") {
  const fs::path dir = test::temp_dir("model_checkpoint");
  fs::remove_all(dir);
  Rig rig;
  std::vector<std::string> written;
  rig.state.write_checkpoint = [&](const std::string& stem) {
    const fs::path file = dir / (stem + ".dtnn");
    fs::create_directories(dir);
    CheckpointInfo info;
    info.optimizer = "sgd";
    write_file_atomically(file.string(), encode_checkpoint(rig.model, rig.sgd.get(), info));
    written.push_back(file.filename().string());
    return file.string();
  };
  auto s = scheduler("model_checkpoint",
                     {{"metric", "val_categorical_cross_entropy"}, {"save_freq", 2}});
  // epoch:            1    2    3    4    5    6
  const double loss[] = {0.9, 0.8, 0.7, 0.75, 0.6, 0.5};
  for (int e = 0; e < 6; ++e) rig.end_epoch(*s, e, {{"val_categorical_cross_entropy", loss[e]}});
  // Improved on 1, 2, 3, 5, 6; of those, epochs 2 and 6 are multiples of 2.
  CHECK(written == std::vector<std::string>{"model-rig-epoch-2.dtnn", "model-rig-epoch-6.dtnn"});
  CHECK(!fs::exists(dir / "model-rig-epoch-2.dtnn"));
  REQUIRE(fs::exists(dir / "model-rig-epoch-6.dtnn"));
  CHECK_NOTHROW(load_checkpoint(dir / "model-rig-epoch-6.dtnn", rig.model));
  fs::remove_all(dir);
}

TEST_CASE("a scheduler restored from state() continues as the one that never stopped") {
  const double losses[] = {1.0, 0.9, 0.95, 0.97, 0.99, 0.98, 0.99, 1.0};
  auto run = [&](bool interrupt) {
    Rig rig(1.0);
    json p = {{"metric", "loss"}, {"patience", 2}, {"factor", 0.5}};
    auto s = scheduler("reduce_lr_on_plateau", p);
    for (int e = 0; e < 8; ++e) {
      if (interrupt && e == 3) {  // a fresh scheduler, given the old one's state
        auto fresh = scheduler("reduce_lr_on_plateau", p);
        fresh->set_state(s->state());
        s = fresh;
      }
      rig.end_epoch(*s, e, {{"loss", losses[e]}});
    }
    return rig.sgd->learning_rate();
  };
  CHECK(run(false) == 0.125);  // reduced after epochs 4, 6 and 8
  CHECK(run(true) == run(false));
}

TEST_CASE("a missing or mistyped metric names the key and what there is") {
  Rig rig;
  auto s = scheduler("reduce_lr_on_plateau", {{"metric", "val_loss"}});
  CHECK_THROWS_WITH(rig.end_epoch(*s, 0, {{"loss", 1.0}, {"categorical_accuracy", 0.5}}),
                    "exp.json: schedulers[0].metric: no value named 'val_loss' after epoch 1 "
                    "(there are: categorical_accuracy, loss); val_ values need "
                    "dataset.validation_split > 0");
  CHECK_THROWS_WITH(scheduler("early_stopping", {{"mode", "lowest"}}),
                    "exp.json: schedulers[0].mode: expected \"auto\", \"min\" or \"max\", got "
                    "\"lowest\"");
}

TEST_CASE("mode auto goes by the metric plugin's trait better, min or max overriding it") {
  const TrainingState& state = Rig().state;
  CHECK(MonitoredValue("val_categorical_accuracy", "auto", "x").maximise(state));
  CHECK(MonitoredValue("f1_score", "auto", "x").maximise(state));
  // Valued by their accuracy, though no word in their names says so.
  CHECK(MonitoredValue("val_binary_confusion_matrix", "auto", "x").maximise(state));
  CHECK(MonitoredValue("multiclass_confusion_matrix", "auto", "x").maximise(state));
  CHECK(!MonitoredValue("val_perplexity", "auto", "x").maximise(state));
  CHECK(!MonitoredValue("val_categorical_cross_entropy", "auto", "x").maximise(state));
  CHECK(!MonitoredValue("val_categorical_accuracy", "min", "x").maximise(state));
  CHECK(MonitoredValue("loss", "max", "x").maximise(state));
}

TEST_CASE("every metric plugin says whether a higher or a lower value is better") {
  for (const PluginRecord& r : test::plugins().records()) {
    if (r.kind != "metric") continue;
    INFO(r.name, " (", r.file.string(), ")");
    CHECK(json::parse(r.traits_json).contains("better"));
  }
}
