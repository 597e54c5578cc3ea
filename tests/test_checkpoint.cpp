// Checkpoints: resuming gives the run that never stopped; damaged or mismatched files are refused
// with a message naming the file and the problem, and leave the model untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "dtnn/checkpoint.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/model.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// Adam (moments, step count) and dropout (its mask step) make every kind of state matter.
json experiment(int epochs) {
  json j = json::parse(R"({
    "model": {"name": "ckpt", "layers": [{"type": "conv2d", "filters": 3, "kernel": 3}, {"type": "relu"},
              {"type": "flatten"}, {"type": "dropout", "rate": 0.2}, {"type": "fc", "units": 3},
              {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [6, 6, 1], "classes": 3, "train_samples": 40,
                "test_samples": 8},
    "training": {"batch_size": 8, "evaluate": false},
    "optimizer": {"name": "adam", "learning_rate": 0.01},
    "output": {"progress": "none"}
  })");
  j["training"]["epochs"] = epochs;
  return j;
}

std::vector<float> weights(Model& m) {
  std::vector<float> out;
  for (const auto& p : m.parameters())
    out.insert(out.end(), p.value.data<float>(), p.value.data<float>() + p.value.numel());
  return out;
}

std::vector<float> train(json j) {
  Experiment e(make_experiment(j, {}, "test"), test::plugins());
  e.run();
  return weights(e.model());
}
}  // namespace

TEST_CASE("2 epochs give the weights of 1 epoch, stop, resume, 1 more epoch") {
  const fs::path dir = test::temp_dir("resume");
  fs::remove_all(dir);
  const std::vector<float> straight = train(experiment(2));
  json first = experiment(1);
  first["output"]["checkpoint_dir"] = dir.string();
  train(first);
  CHECK(fs::exists(dir / "checkpoint-epoch-0001-step-000000.dtnn"));
  json second = experiment(2);
  second["training"]["resume"] = dir.string();
  const std::vector<float> resumed = train(second);
  REQUIRE(resumed.size() == straight.size());
  CHECK(std::memcmp(resumed.data(), straight.data(), straight.size() * sizeof(float)) == 0);
  fs::remove_all(dir);
}

TEST_CASE("fp16's dynamic loss scale resumes where it was") {
  // A scale that overflows, shrinks and grows back every other step: where it stands at the stop
  // decides which of the next steps are skipped, so a resumed run that started the scale afresh
  // would train to other weights.
  const fs::path dir = test::temp_dir("resume_loss_scale");
  fs::remove_all(dir);
  auto fp16 = [&](int epochs) {
    json j = experiment(epochs);
    j["training"]["precision"] = "fp16";
    j["training"]["loss_scale"] = 16777216.0;  // 2^24: the first steps overflow
    j["training"]["loss_scale_growth_interval"] = 1;
    return j;
  };
  json straight_run = fp16(3);
  Experiment straight(make_experiment(straight_run, {}, "test"), test::plugins());
  const History h = straight.run();
  REQUIRE(h.loss_scale);
  CHECK(h.loss_scale_overflows >= 5);
  json first = fp16(1);
  first["output"]["checkpoint_dir"] = dir.string();
  train(first);
  json second = fp16(3);
  second["training"]["resume"] = dir.string();
  const std::vector<float> resumed = train(second);
  const std::vector<float> expected = weights(straight.model());
  REQUIRE(resumed.size() == expected.size());
  CHECK(std::memcmp(resumed.data(), expected.data(), expected.size() * sizeof(float)) == 0);
  fs::remove_all(dir);
}

TEST_CASE("schedulers' state and the learning rate they set resume exactly") {
  const fs::path dir = test::temp_dir("resume_schedulers");
  fs::remove_all(dir);
  auto with_schedulers = [&](int epochs) {
    json j = experiment(epochs);
    j["dataset"]["validation_split"] = 0.2;
    j["output"]["checkpoint_dir"] = dir.string();
    // Each scheduler's counters matter after the stop at epoch 2: warm_up is mid-ramp, and
    // reduce_lr_every_nepochs reduces after epoch 3 only if it remembers epochs 1 and 2.
    j["schedulers"] = json::parse(R"([
      {"name": "warm_up", "warmup_epochs": 3, "base_lr": 0.002},
      {"name": "reduce_lr_every_nepochs", "nepochs": 3, "factor": 0.5},
      {"name": "reduce_lr_on_plateau", "metric": "val_categorical_accuracy", "patience": 1,
       "factor": 0.5},
      {"name": "model_checkpoint", "metric": "loss", "save_freq": 1}])");
    return j;
  };
  const std::vector<float> straight = train(with_schedulers(4));
  fs::remove_all(dir);
  train(with_schedulers(2));
  CHECK(fs::exists(dir / "model-ckpt-epoch-2.dtnn"));  // the loss improved in epoch 2
  json second = with_schedulers(4);
  second["training"]["resume"] = dir.string();
  const std::vector<float> resumed = train(second);
  REQUIRE(resumed.size() == straight.size());
  CHECK(std::memcmp(resumed.data(), straight.data(), straight.size() * sizeof(float)) == 0);
  fs::remove_all(dir);
}

TEST_CASE("only the newest checkpoints are kept") {
  const fs::path dir = test::temp_dir("keep");
  fs::remove_all(dir);
  json j = experiment(4);
  j["output"]["checkpoint_dir"] = dir.string();
  j["output"]["checkpoint_keep"] = 2;
  train(j);
  CHECK(!fs::exists(dir / "checkpoint-epoch-0002-step-000000.dtnn"));
  CHECK(fs::exists(dir / "checkpoint-epoch-0003-step-000000.dtnn"));
  CHECK(latest_checkpoint(dir) == dir / "checkpoint-epoch-0004-step-000000.dtnn");
  fs::remove_all(dir);
}

TEST_CASE("damaged and mismatched checkpoints are refused and change nothing") {
  const fs::path dir = test::temp_dir("damaged");
  fs::remove_all(dir);
  json j = experiment(1);
  j["output"]["checkpoint_dir"] = dir.string();
  train(j);
  const fs::path good = latest_checkpoint(dir);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
  };
  Experiment e(make_experiment(experiment(1), {}, "test"), test::plugins());
  const std::vector<float> before = weights(e.model());
  auto error_loading = [&](const fs::path& f) {
    return test::error_of([&] { load_checkpoint(f, e.model()); });
  };

  const fs::path truncated = write("truncated.dtnn", bytes.substr(0, bytes.size() - 100));
  CHECK(error_loading(truncated) == truncated.string() +
                                        ": corrupt or truncated checkpoint (checksum mismatch "
                                        "over " +
                                        std::to_string(bytes.size() - 108) + " bytes)");
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  CHECK(error_loading(write("flipped.dtnn", flipped)).find("checksum mismatch") !=
        std::string::npos);
  CHECK(error_loading(write("short.dtnn", "DTNN")) ==
        (dir / "short.dtnn").string() +
            ": not a dtnn checkpoint (expected \"DTNNCKPT\" at offset 0)");
  CHECK(error_loading(dir / "absent.dtnn") ==
        (dir / "absent.dtnn").string() + ": cannot open (No such file or directory)");

  json other = experiment(1);
  other["model"]["layers"][4]["units"] = 4;
  other["dataset"]["classes"] = 4;
  Experiment o(make_experiment(other, {}, "test"), test::plugins());
  CHECK(test::error_of([&] { load_checkpoint(good, o.model()); }) ==
        good.string() +
            ": checkpoint's parameter '5.fc.weights' [48,3] float32 does not match "
            "this model's parameter '5.fc.weights' [48,4] float32 (checkpoint of "
            "model 'ckpt')");
  json wide = experiment(1);
  wide["training"]["dtype"] = "float64";
  Experiment w(make_experiment(wide, {}, "test"), test::plugins());
  CHECK(test::error_of([&] { load_checkpoint(good, w.model()); }) ==
        good.string() + ": checkpoint holds float32 tensors, this model is float64");
  json sgd = experiment(2);
  sgd["optimizer"] = {{"name", "sgd"}};
  sgd["training"]["resume"] = dir.string();
  CHECK(test::error_of([&] { Experiment(make_experiment(sgd, {}, "test"), test::plugins()); }) ==
        good.string() +
            ": checkpoint holds the state of optimizer 'adam', this run uses 'sgd' "
            "(load weights only with training.weights_and_bias_filename)");
  CHECK(weights(e.model()) == before);  // every failed load left the model as it was
  fs::remove_all(dir);
}

TEST_CASE("a codec's state (PowerSGD's factors) goes into a checkpoint and comes back, checked") {
  Experiment e(make_experiment(experiment(1), {}, "test"), test::plugins());
  CheckpointInfo info;
  info.exchange_codec_states = {{1.0f, -2.0f, 3.5f}, {}, {0.25f}};
  const std::string bytes = encode_checkpoint(e.model(), nullptr, info);
  const CheckpointInfo back = decode_checkpoint(bytes, "exp.dtnn", e.model(), nullptr, "");
  CHECK(back.exchange_codec_states == info.exchange_codec_states);
  CHECK(back.exchange_residuals.empty());
  info.exchange_codec_states[2][0] = std::nanf("");
  CHECK(test::error_of([&] {
          decode_checkpoint(encode_checkpoint(e.model(), nullptr, info), "exp.dtnn", e.model(),
                            nullptr, "");
        }) == "exp.dtnn: exchange codec state 'bucket 2' holds a value that is not finite");
}
