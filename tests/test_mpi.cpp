// Data-parallel training under `mpiexec -n 2` and `-n 3` (CTest runs this binary both ways).
// Every rank runs every test case; each rank checks its own view, and any failing rank fails
// the job. The one-process references are computed by every rank itself, with the local
// communicator, so nothing travels through files.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "device_model_double.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/device_communicator.hpp"
#include "dtnn/energy_meter.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/gradient_exchange.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "dtnn/model_sync.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/step_energy.hpp"
#include "dtnn/testing/loopback.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "dtnn/vector_width.hpp"
#include "test_support.hpp"
#include "wire_testing.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// A small conv model on synthetic data, trained with plain SGD: the data-parallel run and the
// one-process run must then agree up to rounding.
json conv_experiment() {
  return json::parse(R"({
    "model": {"layers": [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1}, {"type": "relu"},
                         {"type": "maxpool2d"}, {"type": "flatten"}, {"type": "fc", "units": 8},
                         {"type": "tanh"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [8, 8, 2], "classes": 3, "train_samples": 100,
                "test_samples": 20},
    "training": {"batch_size": 4, "epochs": 2, "evaluate": false, "threads": 1},
    "optimizer": {"name": "sgd", "learning_rate": 0.05},
    "output": {"progress": "none"}
  })");
}

std::vector<double> weights(Model& m) {
  std::vector<double> out;
  for (const auto& p : m.parameters())
    dispatch_dtype(p.value.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* v = p.value.data<T>();
      out.insert(out.end(), v, v + p.value.numel());
    });
  return out;
}

struct Trained {
  std::vector<double> weights;
  History history;
  int ranks = 1;
};

Trained train(json config, bool local = false) {
  if (local) config["parallel"]["communicator"] = "local";
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  Trained t;
  t.history = e.run();
  t.weights = weights(e.model());
  return t;
}

// One fc layer of 2 units on 3 inputs, batch 1.
std::unique_ptr<Model> tiny_model() {
  ModelOptions o;
  o.max_batch = 1;
  return std::make_unique<Model>(
      parse_model_spec(json::parse(R"({"layers": [{"type": "fc", "units": 2}]})"), "tiny"), o,
      Shape{3}, test::plugins());
}

// |a - b| / |b|, over the whole vectors.
double relative_distance(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(diff / norm);
}

double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1e-3, std::abs(b[i])));
  return worst;
}

std::shared_ptr<Communicator> world() { return open_communicator("mpi", test::plugins(), "test"); }

// Rank 0's vector, as every rank sees it.
std::vector<double> from_rank0(Communicator& comm, std::vector<double> v) {
  comm.broadcast(v.data(), v.size(), DType::float64, 0, "test vector");
  return v;
}

}  // namespace

// The parameters that open communicator `name` on the MPI job's ranks: none, tcp's (or grpc's) on
// loopback, or mqtt's through a broker rank 0 starts (kept in `broker`).
json parameters_for(const std::string& name, Communicator& mpi,
                    std::unique_ptr<test::Broker>& broker) {
  if (name == "tcp" || name == "grpc") return testing::loopback_tcp_parameters(mpi);
  if (name != "mqtt") return json::object();
  if (mpi.rank() == 0) broker = std::make_unique<test::Broker>(false);
  double port = broker ? broker->port() : 0;
  mpi.broadcast(&port, 1, DType::float64, 0, "broker port");
  return {{"rank", mpi.rank()},
          {"world_size", mpi.size()},
          {"broker", "127.0.0.1:" + std::to_string(static_cast<int>(port))},
          {"topic", "dtnn-mpi-test"}};
}

TEST_CASE("conformance: every communicator plugin's collectives, on every rank") {
  int communicators = 0;
  auto mpi = world();
  for (const std::string& name : test::plugins().available("communicator")) {
    if (name == "mqtt" && !test::have_mosquitto()) {
      MESSAGE("mqtt: skipped, no /usr/sbin/mosquitto");
      continue;
    }
    ++communicators;
    std::unique_ptr<test::Broker> broker;
    auto comm =
        open_communicator(name, test::plugins(), "test", parameters_for(name, *mpi, broker));
    for (const testing::Check& c : testing::check_communicator(*comm)) {
      INFO(name << ": " << c.what << " at " << c.setting);
      CHECK(c.passed);
    }
  }
  CHECK(communicators > 0);
}

TEST_CASE("after data-parallel training every rank holds bit-identical weights") {
  auto comm = world();
  REQUIRE(comm->size() > 1);
  json c = conv_experiment();
  c["optimizer"] = {{"name", "adam"}, {"learning_rate", 0.01}};
  Trained t = train(c);
  const std::vector<double> rank0 = from_rank0(*comm, t.weights);
  CHECK(std::memcmp(rank0.data(), t.weights.data(), rank0.size() * sizeof(double)) == 0);
}

TEST_CASE(
    "a codec carries the exchange: every rank holds the same weights, close to the plain "
    "run's, with the bytes it says") {
  auto comm = world();
  REQUIRE(comm->size() > 1);
  const Trained plain = train(conv_experiment());
  struct Case {
    json codec;
    // sent bytes against plain's (< 0: at most -bytes_ratio of them, oktopk's varying count);
    // |weights - plain's| / |plain's|
    double bytes_ratio, tolerance;
    bool may_equal = false;  // its rounding can fall within float32's: the plain run's very weights
  };
  // Over 50 steps fp16's rounding moved the weights by 5e-6 of their norm, bf16's by 1.4e-3, topk
  // sending 30% with error feedback by 9e-3 (2 and 3 ranks), secagg's fixed point (2^-32) by
  // 3.6e-8: the bounds leave ten times that or more. secagg sends 8 bytes a value, and 16 more a
  // bucket. powersgd at rank 2 sends 215 of the bucket's 672 floats (the conv's 3x3x2x4 filters as
  // 9 x 8: 34; the fc's 64 x 8: 144, 8 x 3: 22; the biases as they are: 15; no padding), and
  // moved the weights by 1.1e-2 (2 ranks) and 8.6e-3 (3 ranks). oktopk at density 0.1 sent
  // 25-39% of the plain bytes (the count varies with the thresholds kept between estimations) and
  // moved the weights by 1.6e-2 (2 ranks) and 1.5e-2 (3 ranks).
  for (const Case& c :
       {Case{"fp16", 0.5, 1e-4}, Case{"bf16", 0.5, 1e-2},
        Case{{{"name", "topk"}, {"density", 0.3}}, 0.6, 0.1}, Case{"secagg", 2.0, 1e-6, true},
        Case{{{"name", "powersgd"}, {"rank", 2}}, 215.0 / 672.0, 0.1},
        Case{{{"name", "oktopk"}, {"density", 0.1}, {"tau", 4}, {"tau_prime", 2}}, -0.5, 0.1}}) {
    CAPTURE(c.codec.dump());
    json config = conv_experiment();
    config["parallel"]["codec"] = c.codec;
    const Trained coded = train(config);
    // The sums are decoded in rank order on every rank: bit-identical weights without the final
    // broadcast's help.
    const std::vector<double> rank0 = from_rank0(*comm, coded.weights);
    CHECK(std::memcmp(rank0.data(), coded.weights.data(), rank0.size() * sizeof(double)) == 0);
    const double difference = relative_distance(coded.weights, plain.weights);
    CHECK(difference < c.tolerance);
    // The codec did carry the exchange: the weights moved (the bytes, below, say it too). secagg's
    // fixed point (2^-32) moved them by 3.6e-8 with gcc's build and by nothing with clang's on a
    // Zen 5 of model 17.
    if (!c.may_equal) CHECK(difference > 0);
    if (c.bytes_ratio > 0)
      CHECK(coded.history.sent_bytes_per_step ==
            doctest::Approx(c.bytes_ratio * plain.history.sent_bytes_per_step).epsilon(0.05));
    else
      CHECK(coded.history.sent_bytes_per_step < -c.bytes_ratio * plain.history.sent_bytes_per_step);
    CHECK(std::isfinite(coded.history.epochs.back().loss));
  }
}

TEST_CASE("N ranks with per-rank batch B train the model one process trains with batch N*B") {
  auto comm = world();
  const int n = comm->size();
  // Equal up to float32 rounding: the ranks' gradients are summed in another order than one
  // process's (per rank, then across ranks), and how far that moves the weights over 2 epochs
  // depends on the build (1.2e-5 at -O1, the sanitizer build). A wrong weighting of the ranks moves
  // them by 1e-2. The 100 samples leave an uneven last global batch.
  json one = conv_experiment();
  one["training"]["batch_size"] = 4 * n;
  Trained reference = train(one, /*local=*/true);
  Trained parallel = train(conv_experiment());
  CHECK(max_relative_difference(parallel.weights, reference.weights) < 5e-5);
  // Global loss and accuracy, as one process sees them.
  CHECK(parallel.history.epochs.back().samples == reference.history.epochs.back().samples);
  CHECK(parallel.history.epochs.back().loss ==
        doctest::Approx(reference.history.epochs.back().loss).epsilon(1e-5));
}

TEST_CASE("N ranks train the transformer language model one process trains with batch N*B") {
  // A small GPT-style model (embedding, learned positions, a pre-norm attention and feed-forward
  // block, a per-position classifier) on a text every rank reads from the same file, which rank 0
  // writes. Same tolerance as the conv model above.
  auto comm = world();
  const int n = comm->size();
  // One path for every rank (test::temp_dir names a folder per process): the launcher's pid.
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("dtnn-test-mpi-lm-" + std::to_string(::getppid()) + ".txt");
  if (comm->rank() == 0) {
    std::string text;
    for (int i = 0; i < 300; ++i) text += "the cat sat on the mat " + std::to_string(i % 7) + ". ";
    std::ofstream(file) << text;
  }
  from_rank0(*comm, {0.0});  // a barrier: the file is whole before anyone reads it
  json lm = json::parse(R"({
    "model": {"layers": [
      {"type": "embedding", "vocab": "$vocab", "units": 16},
      {"type": "positional_encoding", "kind": "learned", "weights_initializer": "small_normal"},
      {"type": "add", "paths": [[{"type": "layer_norm"},
                                 {"type": "multi_head_attention", "heads": 2, "causal": true}], []]},
      {"type": "add", "paths": [[{"type": "layer_norm"}, {"type": "fc", "units": 32, "flatten": false},
                                 {"type": "gelu", "approximate": "tanh"},
                                 {"type": "fc", "units": 16, "flatten": false}], []]},
      {"type": "layer_norm"}, {"type": "fc", "units": "$classes", "flatten": false},
      {"type": "log_softmax"}]},
    "dataset": {"name": "text", "context": 24, "train_limit": 60},
    "training": {"batch_size": 4, "epochs": 2, "evaluate": false, "threads": 1},
    "optimizer": {"name": "sgd", "learning_rate": 0.1},
    "loss": "nll", "metrics": ["token_accuracy"],
    "output": {"progress": "none"}
  })");
  lm["dataset"]["path"] = file.string();
  json one = lm;
  one["training"]["batch_size"] = 4 * n;
  Trained reference = train(one, /*local=*/true);
  Trained parallel = train(lm);
  CHECK(max_relative_difference(parallel.weights, reference.weights) < 5e-5);
  CHECK(parallel.history.epochs.back().loss ==
        doctest::Approx(reference.history.epochs.back().loss).epsilon(1e-5));
}

TEST_CASE("a global batch that does not divide among the ranks gives the one-process model") {
  json one = conv_experiment();
  one["training"]["batch_size"] = 10;
  Trained reference = train(one, /*local=*/true);
  json split = conv_experiment();
  split["training"]["global_batch_size"] = 10;  // 5+5 on 2 ranks, 3+3+4 on 3
  Trained parallel = train(split);
  CHECK(max_relative_difference(parallel.weights, reference.weights) < 1e-5);
}

TEST_CASE("blocking and bucketed non-blocking exchanges give the same weights") {
  json c = conv_experiment();
  c["parallel"]["bucket_size_mb"] = 0.0005;  // several buckets for this small model
  Trained nonblocking = train(c);
  c["parallel"]["blocking"] = true;
  Trained blocking = train(c);
  CHECK(max_relative_difference(blocking.weights, nonblocking.weights) < 1e-6);
}

TEST_CASE("model averaging every N batches: every rank ends with the same weights") {
  auto comm = world();
  json c = conv_experiment();
  c["parallel"]["model_sync_freq"] = 3;
  Trained t = train(c);
  const std::vector<double> rank0 = from_rank0(*comm, t.weights);
  CHECK(std::memcmp(rank0.data(), t.weights.data(), rank0.size() * sizeof(double)) == 0);
}

TEST_CASE("resume on N ranks: 1 epoch, stop, resume, 1 more gives the 2-epoch weights") {
  auto comm = world();
  // Plain, and with a lossy codec whose error-feedback residuals (every rank's own) must come back
  // from the checkpoint for the weights to match.
  // secagg: new keys in the resumed run, new masks, the same sums bit for bit. powersgd: its
  // factors (the next step's warm start) come back from the checkpoint too.
  // oktopk: its thresholds and regions, estimated every 2 and 3 sums, come back mid-cycle.
  for (const json& codec :
       {json("none"), json{{"name", "topk"}, {"density", 0.2}}, json("secagg"),
        json{{"name", "powersgd"}, {"rank", 2}},
        json{{"name", "oktopk"}, {"density", 0.2}, {"tau", 3}, {"tau_prime", 2}}}) {
    CAPTURE(codec.dump());
    // Every rank names the same folder (rank 0's pid), so all load what rank 0 wrote.
    std::vector<double> id{static_cast<double>(::getpid())};
    id = from_rank0(*comm, id);
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() /
        ("dtnn-mpi-resume-" + std::to_string(static_cast<long>(id[0])));
    json c = conv_experiment();
    c["optimizer"] = {{"name", "adam"}, {"learning_rate", 0.01}};
    c["parallel"]["codec"] = codec;
    const Trained straight = train(c);
    json first = c;
    first["training"]["epochs"] = 1;
    first["output"]["checkpoint_dir"] = dir.string();
    train(first);
    comm->barrier("checkpoint written");  // rank 0 has written the checkpoint
    json second = c;
    second["training"]["resume"] = dir.string();
    const Trained resumed = train(second);
    CHECK(std::memcmp(resumed.weights.data(), straight.weights.data(),
                      straight.weights.size() * sizeof(double)) == 0);
    comm->barrier("test done");
    if (comm->rank() == 0) std::filesystem::remove_all(dir);
    comm->barrier("folder removed");
  }
}

TEST_CASE("a non-finite step stops every rank at the same batch with the same message") {
  auto comm = world();
  for (std::int64_t sync_freq : {0, 3}) {  // gradients summed every step; weights averaged
    CAPTURE(sync_freq);
    json c = conv_experiment();  // without tanh, whose bound keeps the values finite
    c["model"]["layers"] = json::parse(R"([{"type": "flatten"}, {"type": "fc", "units": 16},
        {"type": "relu"}, {"type": "fc", "units": 3}, {"type": "softmax"}])");
    c["optimizer"]["learning_rate"] = 1e20;
    c["parallel"]["model_sync_freq"] = sync_freq;
    const Trained t = train(c);
    CHECK(t.history.exit_code == 1);
    CHECK(t.history.stopped.find("training stopped at epoch 1, batch 2 of ") != std::string::npos);
    // Every rank holds rank 0's text (compared as character codes).
    std::vector<double> text(t.history.stopped.begin(), t.history.stopped.end());
    text.resize(400, 0.0);
    CHECK(from_rank0(*comm, text) == text);
    json skip = c;
    skip["training"]["on_nonfinite"] = "skip_batch";
    const Trained s = train(skip);
    CHECK(s.history.stopped.empty());
    CHECK(s.history.skipped_batches > 0);
    CHECK(
        std::all_of(s.weights.begin(), s.weights.end(), [](double w) { return std::isfinite(w); }));
  }
}

// Rank r's own table (PyDTNN 3.x's --no-shared-data): 4 + 3r rows of 3 features and a linear
// target. Every rank writes every rank's file (the same bytes), each through a rename, so a
// rank never reads a half-written one.
std::filesystem::path local_tables(int ranks) {
  const auto dir = std::filesystem::temp_directory_path() / "dtnn-mpi-local-data";
  std::filesystem::create_directories(dir);
  auto table = [](int r, int rows) {
    std::ostringstream out;
    for (int i = 0; i < rows; ++i) {
      const double a = 0.1 * (i % 5) - 0.2, b = 0.05 * (r + 1) * (i % 3), c = 0.3 - 0.07 * i;
      out << a << "," << b << "," << c << "," << (0.5 * a - 1.5 * b + 2.0 * c + 0.25) << "\n";
    }
    return out.str();
  };
  const std::string me = std::to_string(getpid());
  for (int r = 0; r < ranks; ++r)
    for (const auto& [name, rows] : {std::pair{"train_", 4 + 3 * r}, std::pair{"test_", 2 + r}}) {
      const auto file = dir / (name + std::to_string(r) + ".csv");
      std::ofstream(file.string() + "." + me) << table(r, rows);
      std::filesystem::rename(file.string() + "." + me, file);
    }
  return dir;
}

TEST_CASE("per-rank datasets: each rank trains its own samples, weighted by their counts") {
  auto comm = world();
  const int n = comm->size(), me = comm->rank();
  const auto dir = local_tables(n);
  json config = json::parse(R"({
    "model": {"layers": [{"type": "fc", "units": 1}]},
    "dataset": {"name": "csv"},
    "loss": "mse", "metrics": ["regression_mse"],
    "training": {"batch_size": 3, "epochs": 1, "shuffle": false, "evaluate": true, "threads": 1},
    "optimizer": {"name": "sgd", "learning_rate": 0.1},
    "parallel": {"shared_data": false, "model_sync_alg": "wavg"},
    "output": {"progress": "none"}
  })");
  config["dataset"]["path"] = (dir / "train_{rank}.csv").string();
  config["dataset"]["test_path"] = (dir / "test_{rank}.csv").string();
  const Trained run = train(config);
  // Every rank trained every step of the longest rank's epoch; all samples once.
  std::int64_t samples = 0, tests = 0, steps = 0;
  for (int r = 0; r < n; ++r) {
    samples += 4 + 3 * r;
    tests += 2 + r;
    steps = std::max<std::int64_t>(steps, (4 + 3 * r + 2) / 3);
  }
  REQUIRE(run.history.epochs.size() == 1);
  CHECK(run.history.epochs[0].samples == samples);
  REQUIRE(run.history.test);
  CHECK(run.history.test->samples == tests);  // each rank its own test split

  // By hand on one process: at step s rank r has its rows 3s to 3s+2 (those it has) and their
  // mean gradient g_r; the update is lr * sum_r w_r g_r, w_r the algorithm's weight for the
  // step's counts (rank_weight, checked against the formulas below). With wavg that is the
  // gradient over the union of the step's rows. The same first weights: the one-process
  // experiment on rank 0's table (its seed initialises the model alike).
  auto rows = [&](int r) {
    std::vector<std::vector<float>> out;
    std::ifstream in(dir / ("train_" + std::to_string(r) + ".csv"));
    for (std::string line; std::getline(in, line);) {
      std::vector<float> row;
      std::stringstream cells(line);
      for (std::string cell; std::getline(cells, cell, ',');) row.push_back(std::stof(cell));
      out.push_back(row);
    }
    return out;
  };
  std::vector<std::vector<std::vector<float>>> tables;
  for (int r = 0; r < n; ++r) tables.push_back(rows(r));
  auto mse = test::plugins().create_as<Loss>("loss", "mse", Params());
  auto by_hand = [&](SyncAlgorithm algorithm, SyncParticipation participation) {
    json one = config;
    one["dataset"]["path"] = (dir / "train_0.csv").string();
    one["dataset"]["test_path"] = (dir / "test_0.csv").string();
    one["training"]["epochs"] = 0;
    one["parallel"]["communicator"] = "local";
    Experiment reference(make_experiment(one, {}, "test"), test::plugins());
    Model& model = reference.model();
    for (std::int64_t s = 0; s < steps; ++s) {
      std::vector<std::int64_t> counts(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r)
        counts[static_cast<std::size_t>(r)] = std::clamp<std::int64_t>(4 + 3 * r - 3 * s, 0, 3);
      std::vector<std::vector<float>> update;
      for (const auto& p : model.parameters())
        update.emplace_back(static_cast<std::size_t>(p.value.numel()), 0.0f);
      for (int r = 0; r < n; ++r) {
        const std::int64_t m = counts[static_cast<std::size_t>(r)];
        if (m == 0) continue;
        Tensor x = Tensor::empty(Shape{m, 3}, DType::float32),
               y = Tensor::empty(Shape{m, 1}, DType::float32);
        for (std::int64_t i = 0; i < m; ++i) {
          const auto& row =
              tables[static_cast<std::size_t>(r)][static_cast<std::size_t>(3 * s + i)];
          for (int k = 0; k < 3; ++k) x.data<float>()[i * 3 + k] = row[static_cast<std::size_t>(k)];
          y.data<float>()[i] = row[3];
        }
        mse->forward(model.forward(x, Mode::train), y);
        model.zero_grad();
        model.backward(*mse, y);
        const auto w = static_cast<float>(rank_weight(algorithm, participation, counts, r));
        std::size_t k = 0;
        for (const auto& p : model.parameters()) {
          for (std::int64_t i = 0; i < p.value.numel(); ++i)
            update[k][static_cast<std::size_t>(i)] += w * p.grad.data<float>()[i];
          ++k;
        }
      }
      std::size_t k = 0;
      for (const auto& p : model.parameters()) {
        for (std::int64_t i = 0; i < p.value.numel(); ++i)
          p.value.data<float>()[i] -= 0.1f * update[k][static_cast<std::size_t>(i)];
        ++k;
      }
    }
    return weights(model);
  };
  CAPTURE(me);
  CHECK(max_relative_difference(run.weights, by_hand(SyncAlgorithm::wavg, SyncParticipation::all)) <
        1e-5);
  // Each algorithm and participation weighs the ranks by their own counts, differently.
  const std::vector<double> wavg = by_hand(SyncAlgorithm::wavg, SyncParticipation::all);
  for (const auto& [algorithm, participation] :
       {std::pair{"avg", "all"}, std::pair{"invwavg", "all"}, std::pair{"avg", "avail2all"}}) {
    CAPTURE(algorithm);
    CAPTURE(participation);
    config["parallel"]["model_sync_alg"] = algorithm;
    config["parallel"]["model_sync_participation"] = participation;
    const std::vector<double> expected =
        by_hand(parse_sync_algorithm(algorithm), parse_sync_participation(participation));
    CHECK(max_relative_difference(train(config).weights, expected) < 1e-5);
    CHECK(max_relative_difference(expected, wavg) > 1e-3);
  }
}

TEST_CASE("average_weights computes each algorithm's weighted average") {
  auto comm = world();
  const int n = comm->size(), me = comm->rank();
  const std::unique_ptr<Model> tiny = tiny_model();
  Model& m = *tiny;
  GradientExchange exchange(m, *comm, ExchangeOptions{});
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) counts[static_cast<std::size_t>(r)] = 10 * (r + 1);  // 10, 20, 30
  for (SyncAlgorithm alg : {SyncAlgorithm::avg, SyncAlgorithm::wavg, SyncAlgorithm::invwavg}) {
    for (const auto& p : m.parameters())  // rank r holds r + 1 everywhere
      std::fill(p.value.data<float>(), p.value.data<float>() + p.value.numel(), float(me + 1));
    exchange.average_weights(rank_weight(alg, SyncParticipation::all, counts, me));
    // By hand: avg = mean(r + 1); wavg = sum n_r (r + 1) / sum n_r;
    // invwavg = sum (min + max - n_r)(r + 1) / sum (min + max - n_r).
    double expected = 0, norm = 0;
    for (int r = 0; r < n; ++r) {
      const double nr = 10.0 * (r + 1), lo = 10.0, hi = 10.0 * n;
      const double w = alg == SyncAlgorithm::avg    ? 1.0
                       : alg == SyncAlgorithm::wavg ? nr
                                                    : lo + hi - nr;
      expected += w * (r + 1);
      norm += w;
    }
    expected /= norm;
    for (const auto& p : m.parameters())
      for (std::int64_t i = 0; i < p.value.numel(); ++i)
        CHECK(p.value.data<float>()[i] == doctest::Approx(expected).epsilon(1e-6));
  }
}

TEST_CASE(
    "pipelined exchange (--parallel-pipeline): each step applies the previous step's sums, "
    "the last both") {
  auto comm = world();
  const int n = comm->size(), me = comm->rank();
  const std::unique_ptr<Model> tiny = tiny_model();
  Model& m = *tiny;
  ExchangeOptions eo;
  eo.pipeline = true;
  eo.bucket_bytes = 8;  // a bucket per parameter: several requests in flight
  GradientExchange exchange(m, *comm, eo);
  auto sgd = test::plugins().create_as<Optimizer>(
      "optimizer", "sgd", Params(json{{"learning_rate", 1.0}}, "test: optimizer"), {});
  sgd->build(m.parameters());
  for (const auto& p : m.parameters())
    std::fill(p.value.data<float>(), p.value.data<float>() + p.value.numel(), 0.0f);
  auto value = [&] { return static_cast<double>(m.parameters()[0].value.data<float>()[0]); };
  // Step t: every rank's gradient is (t + 1)(r + 1); summed (weight 1): (t + 1) n (n + 1) / 2.
  const double unit = n * (n + 1) / 2.0;
  std::vector<double> seen;
  for (int t = 0; t < 4; ++t) {
    for (const auto& p : m.parameters())
      std::fill(p.grad.data<float>(), p.grad.data<float>() + p.grad.numel(),
                float((t + 1) * (me + 1)));
    if (t == 3) exchange.drain_at_next_finish();
    exchange.begin(1.0);
    exchange.contribute_nothing();
    CHECK(exchange.finish(*sgd));
    seen.push_back(value());
  }
  // Nothing after step 0; step 1 applies step 0's sum; ...; step 3 applies steps 2 and 3.
  CHECK(seen == std::vector<double>{0, -1 * unit, -3 * unit, -10 * unit});
  CHECK(exchange.drain(*sgd, NonFinitePolicy::ignore));  // nothing left in flight
  CHECK(value() == -10 * unit);
}

TEST_CASE("a pipelined run trains: every rank holds the same weights, near the plain run's") {
  auto comm = world();
  REQUIRE(comm->size() > 1);
  const Trained plain = train(conv_experiment());
  json config = conv_experiment();
  config["parallel"]["pipeline"] = true;
  const Trained pipelined = train(config);
  const std::vector<double> rank0 = from_rank0(*comm, pipelined.weights);
  CHECK(std::memcmp(rank0.data(), pipelined.weights.data(), rank0.size() * sizeof(double)) == 0);
  const double difference = relative_distance(pipelined.weights, plain.weights);
  CHECK(difference > 0);    // stale updates are not the plain ones...
  CHECK(difference < 0.2);  // ...but train the same model
  CHECK(pipelined.history.epochs.back().loss < pipelined.history.epochs.front().loss * 1.05);
  // One step per epoch: each step drains itself, which is the plain exchange.
  json one = conv_experiment(), one_pipelined;
  one["training"]["steps_per_epoch"] = 1;
  one_pipelined = one;
  one_pipelined["parallel"]["pipeline"] = true;
  CHECK(train(one).weights == train(one_pipelined).weights);
}

TEST_CASE(
    "a model on a device: its gradients, staged through pinned host memory, average over ranks") {
  // Open MPI without CUDA support takes host memory only: gpudirect falls back to staging.
  auto comm = world();
  const int n = comm->size(), me = comm->rank();
  test::DeviceModel d;
  ExchangeOptions o;
  o.gpudirect = true;
  o.bucket_bytes = 40;  // a bucket per parameter: two non-blocking allreduces in flight
  GradientExchange exchange(d.model, *comm, o);
  CHECK(exchange.route() == ExchangeRoute::host_staged);
  const auto params = d.model.parameters();
  for (int step = 0; step < 2; ++step) {
    // Rank r's gradient j of parameter p: (r + 1) (10 p + j + step).
    for (std::size_t p = 0; p < params.size(); ++p)
      for (std::int64_t j = 0; j < 5; ++j)
        params[p].grad.data<double>()[j] = (me + 1) * (10.0 * double(p) + double(j + step));
    test::Recorder recorder;
    recorder.build(params);
    exchange.begin(1.0 / n);
    for (std::size_t layer = d.model.num_layers(); layer-- > 0;) {
      const auto [first, end] = d.model.parameter_range(layer);
      exchange.gradients_ready(first, end - first);
    }
    exchange.finish(recorder);
    const double mean_factor = (n + 1) / 2.0;  // the mean of r + 1 over the ranks
    for (std::size_t p = 0; p < params.size(); ++p)
      for (std::size_t j = 0; j < 5; ++j)
        CHECK(recorder.grads[p][j] ==
              doctest::Approx(mean_factor * (10.0 * double(p) + double(j) + step)));
  }
  // Rank 0's weights reach every rank by the same route.
  for (const auto& p : params)
    std::fill(p.value.data<double>(), p.value.data<double>() + 5, me + 1.0);
  exchange.broadcast_weights(0);
  for (const auto& p : params)
    for (std::int64_t j = 0; j < 5; ++j) CHECK(p.value.data<double>()[j] == 1.0);
}

TEST_CASE("ranks that would share a GPU are found, the same on every rank (NCCL needs one each)") {
  auto comm = world();
  // All ranks of this test run on one host: device 0 for all is shared, one device each is not.
  CHECK(ranks_sharing_a_device(*comm, 0) == "ranks 0 and 1 both use device 0 of one host");
  CHECK(ranks_sharing_a_device(*comm, comm->rank()) == "");
  CHECK(ranks_sharing_a_device(*comm, comm->rank() == 2 ? 1 : comm->rank()) ==
        (comm->size() > 2 ? "ranks 1 and 2 both use device 1 of one host" : ""));
}

TEST_CASE("best_of: every rank takes the choice the ranks' medians make together") {
  // Rank 0 sees test_fast 10 ms slower than the others do (sleepy_conv.cpp reads
  // DTNN_TEST_EXTRA_MS_<name>): alone it would keep test_medium (3 ms against 11), the others
  // test_fast (1 ms against 3). Averaged over 2 or 3 ranks test_fast takes 6 or 4.3 ms, so every
  // rank must end with test_medium.
  auto comm = world();
  if (comm->rank() == 0) setenv("DTNN_TEST_EXTRA_MS_test_fast", "10", 1);
  const Registry doubles({DTNN_TEST_PLUGIN_DIR, std::string(DTNN_TEST_DOUBLES) + "/sleepy"});
  auto algo = doubles.create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(json{{"candidates", {"test_medium", "test_fast"}}, {"rounds", 4}, {"cache_file", ""}},
             "test"));
  unsetenv("DTNN_TEST_EXTRA_MS_test_fast");  // read when best_of created its candidates
  ConvGeometry g;
  g.n = 2, g.h = 6, g.w = 5, g.c = 3, g.k = 4, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  algo->set_communicator(comm.get());
  algo->prepare(g);
  Tensor x = Tensor::zeros(g.x_shape(g.n), g.dtype), w = Tensor::zeros(g.w_shape(), g.dtype);
  Tensor y = Tensor::zeros(g.y_shape(g.n), g.dtype), dx = Tensor::zeros(x.shape(), g.dtype);
  Tensor dw = Tensor::zeros(w.shape(), g.dtype);
  for (int step = 0; step < 2 * 4 + 1; ++step) {  // 4 rounds of 2 candidates, then the choice
    algo->forward(x, w, y);
    algo->backward_filter(x, y, dw);
    algo->backward_data(y, w, dx);
  }
  CAPTURE(algo->report());
  CHECK(algo->name() == "best_of(test_medium)");
}

TEST_CASE("every rank of an experiment takes rank 0's AVX-512 vector width") {
  // Each rank timing the width alone measured ratios from 0.32 to 3.0 on shared cores, and ranks
  // with kernels of different widths round their sums apart. Here the ranks start out differing
  // (rank 0 at 32 bytes, the others at 64); opening the experiment must leave all at rank 0's.
  auto comm = world();
  const VectorWidth before = avx512_vector_width();
  VectorWidth mine;
  mine.bytes = comm->rank() == 0 ? 32 : 64;
  mine.decided_by = "this test";
  set_avx512_vector_width(mine);
  json config = conv_experiment();
  config["training"]["epochs"] = 1;
  { Experiment e(make_experiment(config, {}, "test"), test::plugins()); }
  double bytes = avx512_vector_width().bytes;
  std::vector<double> all(static_cast<std::size_t>(comm->size()));
  comm->allgather(&bytes, all.data(), 1, DType::float64, "vector widths");
  // The small GEMM kernels too, though this process multiplied long before (in the tests above).
  const bool avx512 = small_gemm_kernels().best_level() == isa::Level::avx512;
  const int small_bytes = small_gemm_kernels().best().vector_bytes();
  set_avx512_vector_width(before);
  for (double b : all) CHECK(b == 32);
  if (avx512) CHECK(small_bytes == 32);
}

TEST_CASE("energy: ranks on one host read one node's counters, counted once") {
  // Each rank's meter advances (rank + 1) J a reading: the node's figure is its first rank's.
  class Counting final : public EnergySource {
   public:
    explicit Counting(double step) : step_(step) {}
    std::string describe() const override { return "counting"; }
    std::vector<EnergyDomain> domains() const override { return {{"all", true}}; }
    std::vector<double> read() override { return {step_ * static_cast<double>(reads_++)}; }

   private:
    double step_;
    int reads_ = 0;
  };
  auto comm = world();
  EnergyMeter meter({std::make_shared<Counting>(comm->rank() + 1.0)});
  energy::install(&meter);
  StepEnergy energy(*comm, true);
  for (int step = 0; step < 3; ++step) {
    energy.begin_step();
    energy.end_step();
  }
  const EpochEnergy e = energy.end_epoch();
  energy::install(nullptr);
  CHECK(e.nodes == 1);
  CHECK(e.nodes_measured == 1);
  CHECK(e.joules == 3.0);             // rank 0's three steps of 1 J; the others' left out
  StepEnergy unwanted(*comm, false);  // no collective: every rank alike
  CHECK(unwanted.end_epoch().nodes_measured == 0);
}

TEST_CASE("confusion matrices are summed over ranks: the one-process matrix, every sample once") {
  json config = conv_experiment();
  config["training"]["evaluate"] = true;
  config["metrics"] = {"multiclass_confusion_matrix"};
  json one = config;  // the one-process model: batch N*B (as tested above)
  one["training"]["batch_size"] = 4 * world()->size();
  const Trained parallel = train(config), single = train(one, true);
  REQUIRE(parallel.history.test);
  REQUIRE(single.history.test);
  const auto& mine = parallel.history.test->matrices.at("multiclass_confusion_matrix");
  const auto& alone = single.history.test->matrices.at("multiclass_confusion_matrix");
  double sum = 0;
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t p = 0; p < 3; ++p) {
      sum += mine[t][p];
      CHECK(mine[t][p] == alone[t][p]);  // the same model (as tested above), the same counts
    }
  CHECK(sum == 20);  // the test samples, each counted once over the ranks
}

TEST_CASE("batchnorm sync_stats: every rank normalises with the statistics of all ranks' samples") {
  // Rank r holds samples 2r and 2r+1 of one batch of 2P; the one-process reference (each rank
  // computes it) sees the whole batch. Outputs, dx and (summed over ranks) dgamma/dbeta agree.
  auto comm = world();
  const int ranks = comm->size(), rank = comm->rank();
  const Shape sample{3, 2, 4};
  auto build = [&](Communicator* c, std::int64_t batch) {
    auto layer = test::plugins().create_as<Layer>("layer", "batchnorm",
                                                  Params(json{{"sync_stats", true}}, "test"));
    LayerBuildContext ctx;
    ctx.input_shape = sample;
    ctx.dtype = DType::float64;
    ctx.max_batch = batch;
    ctx.communicator = c;
    ctx.registry = &test::plugins();
    layer->build(ctx);
    return layer;
  };
  const std::int64_t n = sample.numel();
  Tensor x_all = Tensor::empty(sample.with_batch(2 * ranks), DType::float64);
  Tensor dy_all = Tensor::empty(x_all.shape(), DType::float64);
  for (std::int64_t i = 0; i < x_all.numel(); ++i) {
    x_all.data<double>()[i] = std::sin(0.37 * double(i)) * (1 + i % 5) + double(i % 4);
    dy_all.data<double>()[i] = std::cos(0.11 * double(i));
  }
  auto reference = build(nullptr, 2 * ranks);
  Tensor y_ref = Tensor::empty(x_all.shape(), DType::float64), dx_ref = y_ref;
  dx_ref = Tensor::empty(x_all.shape(), DType::float64);
  reference->forward(x_all, y_ref, Mode::train);
  reference->backward(x_all, y_ref, dy_all, &dx_ref);

  auto mine = build(comm.get(), 2);
  const Tensor x = x_all.slice_batch(2 * rank, 2 * rank + 2);
  const Tensor dy = dy_all.slice_batch(2 * rank, 2 * rank + 2);
  Tensor y = Tensor::empty(x.shape(), DType::float64),
         dx = Tensor::empty(x.shape(), DType::float64);
  mine->forward(x, y, Mode::train);
  mine->backward(x, y, dy, &dx);
  double worst = 0;
  for (std::int64_t i = 0; i < 2 * n; ++i) {
    worst = std::max(worst, std::abs(y.data<double>()[i] - y_ref.data<double>()[2 * rank * n + i]));
    worst =
        std::max(worst, std::abs(dx.data<double>()[i] - dx_ref.data<double>()[2 * rank * n + i]));
  }
  CHECK(worst < 1e-12);
  for (std::size_t p = 0; p < 2; ++p) {  // gamma, beta: each rank's share, summed
    Tensor g = mine->parameters()[p].grad;
    comm->allreduce_sum(g.raw(), static_cast<std::size_t>(g.numel()), DType::float64, "test grads");
    for (std::int64_t c = 0; c < g.numel(); ++c)
      CHECK(g.data<double>()[c] ==
            doctest::Approx(reference->parameters()[p].grad.data<double>()[c]).epsilon(1e-12));
  }
  // Running statistics are those of the whole batch on every rank.
  for (std::size_t s = 0; s < 2; ++s)
    for (std::int64_t c = 0; c < 4; ++c)
      CHECK(mine->state()[s].data<double>()[c] ==
            doctest::Approx(reference->state()[s].data<double>()[c]).epsilon(1e-12));
}

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int failures = context.run();
  // A failure on any rank fails the job: ranks agree on the exit code.
  auto comm = world();
  double failed = failures ? 1.0 : 0.0;
  comm->allreduce_sum(&failed, 1, DType::float64, "test failures");
  return failed > 0 ? 1 : 0;
}
