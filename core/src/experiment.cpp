#include "dtnn/experiment.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "dtnn/batch_plan.hpp"
#include "dtnn/checked.hpp"
#include "dtnn/checkpoint.hpp"
#include "dtnn/class_frequencies.hpp"
#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/config_schema.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/device.hpp"
#include "dtnn/device_communicator.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/image_transform.hpp"
#include "dtnn/int8_model.hpp"
#include "dtnn/log.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/memory.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/peak.hpp"
#include "dtnn/pydtnn_weights.hpp"
#include "dtnn/rank_agreement.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/run_profile.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/scheduler.hpp"
#include "dtnn/simulated_network.hpp"
#include "dtnn/tensorboard.hpp"
#include "dtnn/trace_files.hpp"
#include "dtnn/vector_width.hpp"

namespace dtnn {

using nlohmann::json;

namespace {

// The number of processes a launcher (mpirun, srun, ...) started this one among, or 0 when none
// did. Launchers announce themselves in the environment.
long launcher_world_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS"})
    if (const char* s = std::getenv(v)) return std::max(1L, std::strtol(s, nullptr, 10));
  return std::getenv("PMIX_RANK") ? 1 : 0;
}

// The communicator plugins whose traits name a variable of this process's environment
// ({"launched_when": ["OMPI_COMM_WORLD_SIZE", ...]}): those that join the processes a launcher
// started. Sorted by name.
std::vector<std::string> launched_communicators(const Registry& registry) {
  std::vector<std::string> out;
  for (const std::string& name : registry.available("communicator")) {
    for (const std::string& variable : registry.find("communicator", name)->traits.launched_when)
      if (std::getenv(variable.c_str())) {
        out.push_back(name);
        break;
      }
  }
  return out;
}

// This process's index among the ranks on its host (0 when no launcher says): picks its GPU.
int local_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                        "MV2_COMM_WORLD_LOCAL_RANK", "PMIX_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char* s = std::getenv(v))
      return std::max(0, static_cast<int>(std::strtol(s, nullptr, 10)));
  return 0;
}

void flatten(const json& j, const std::string& prefix, std::string& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out += "  " + prefix + " = " + j.dump() + "\n";
  }
}

// A plugin chosen by a name or by {"name": ..., parameters...} (the loss, the communicator, the
// codec): its name and its parameters.
struct PluginChoice {
  std::string name;
  json parameters;
};
PluginChoice plugin_choice(const json& value) {
  if (!value.is_object()) return {value.get<std::string>(), json::object()};
  json parameters = value;
  parameters.erase("name");
  return {value["name"].get<std::string>(), std::move(parameters)};
}

// The one plugin of kind that declares itself the default, for a key left empty.
std::string default_plugin(const Registry& registry, const std::string& kind,
                           const std::string& key, const std::string& where) {
  const std::vector<std::string> names = registry.defaults(kind);
  if (names.size() == 1) return names.front();
  std::string list;
  for (const std::string& n : names.empty() ? registry.available(kind) : names)
    list += (list.empty() ? "" : ", ") + n;
  throw Error(where + ": " + key + ": none given, and " +
              (names.empty() ? "no " + kind + " plugin declares itself the default; available: "
                             : "several " + kind + " plugins declare themselves the default: ") +
              list);
}

// The experiment with its empty plugin names (dataset.name, optimizer.name, loss, conv.algorithm)
// and absent metrics filled in with the plugins that declare themselves their kind's default.
json with_default_plugins(json j, const Registry& registry, const std::string& where) {
  auto fill = [&](json& value, const std::string& kind, const std::string& key) {
    if (value == "") value = default_plugin(registry, kind, key, where);
  };
  fill(j["dataset"]["name"], "dataset", "dataset.name");
  fill(j["optimizer"]["name"], "optimizer", "optimizer.name");
  fill(j["loss"].is_object() ? j["loss"]["name"] : j["loss"], "loss", "loss");
  fill(j["conv"]["algorithm"], "conv", "conv.algorithm");
  if (j["metrics"].is_null()) j["metrics"] = registry.defaults("metric");
  return j;
}

// The fusion options set true. An option no layer plugin declares is an error; one that no layer
// on the run's device declares is said once (cuDNN's conv2d fuses only a relu).
Fusions enabled_fusions(const json& fusion, const Registry& registry, Device device,
                        const std::string& where) {
  const std::set<std::string> declared = fusion_options(registry, Device::cpu);
  const std::set<std::string> here = fusion_options(registry, device);
  Fusions enabled;
  for (auto it = fusion.begin(); it != fusion.end(); ++it) {
    if (!declared.count(it.key()) && !here.count(it.key())) {
      const std::vector<std::string> valid(declared.begin(), declared.end());
      const std::string hint = closest_match(it.key(), valid);
      std::string list;
      for (const std::string& o : valid) list += (list.empty() ? "" : ", ") + o;
      throw Error(where + ": fusion." + it.key() + ": no layer plugin declares this fusion" +
                  (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; declared: " + list);
    }
    if (!it.value().is_boolean())
      throw Error(where + ": fusion." + it.key() + ": expected true or false, got " +
                  it.value().dump());
    if (!it.value().get<bool>()) continue;
    if (!here.count(it.key()))
      log_info("fusion." + it.key() + " does not apply on " + to_string(device) +
               ": no layer there fuses so");
    enabled.insert(it.key());
  }
  return enabled;
}

}  // namespace

std::shared_ptr<Communicator> open_communicator(const std::string& requested,
                                                const Registry& registry, const std::string& where,
                                                const json& parameters) {
  std::string name = requested;
  const long world = launcher_world_size();
  if (name == "auto") {
    const std::vector<std::string> launched = launched_communicators(registry);
    if (world > 1 && launched.empty())
      throw Error(where + ": parallel.communicator: started by a launcher among " +
                  std::to_string(world) +
                  " processes, but no communicator plugin that joins them is installed (such as "
                  "mpi); run without the launcher, or install one");
    name = launched.empty() ? "local" : launched.front();
  }
  if (name == "local" && !parameters.empty())
    throw Error(where + ": parallel.communicator: \"local\" takes no parameters, got " +
                parameters.dump());
  if (name == "local") {
    if (world > 0 && requested == "local")
      log_warning(
          "launched by MPI but parallel.communicator is \"local\": every rank trains alone");
    return std::make_shared<LocalCommunicator>();
  }
  return registry.create_as<Communicator>("communicator", name,
                                          Params(parameters, where + ": parallel.communicator"));
}

namespace {

// The device's collectives library (a device_communicator plugin for the device, such as nccl)
// joined over the host communicator; null, with a warning, where none can be used (gradients then
// go through the host communicator).
std::shared_ptr<DeviceCommunicator> open_device_communicator(const Registry& registry,
                                                             Device device, Communicator& host) {
  const std::vector<std::string> names = registry.available("device_communicator", device);
  if (names.empty()) {
    std::string why = "none is installed";
    for (const PluginRecord& r : registry.records())
      if (r.kind == "device_communicator" && r.device == device)
        why = "'" + r.name + "' is " + to_string(r.status) + " (" + r.reason + ")";
    log_warning(std::string("gpu.nccl: no device_communicator plugin for ") + to_string(device) +
                " can be used: " + why + "; gradients go through the host communicator");
    return nullptr;
  }
  const std::string& name = names.front();
  // NCCL refuses two ranks on one GPU (more ranks than GPUs on a node): every rank learns so
  // from the same collective, and all go through MPI together.
  if (const std::string shared = ranks_sharing_a_device(host, device_runtime(device).ordinal());
      !shared.empty()) {
    if (host.rank() == 0)
      log_warning("gpu.nccl: " + shared +
                  ", and NCCL needs one GPU per rank; gradients go "
                  "through MPI (start as many ranks per node as it has GPUs to use NCCL)");
    return nullptr;
  }
  auto comm =
      registry.create_as<DeviceCommunicator>("device_communicator", name, Params(), {}, device);
  comm->open(host);
  return comm;
}

}  // namespace

namespace {

// What the experiment's keys say of the trainer, read once (the run adds what it learns: the
// ranks' device communicator, a resumed position).
TrainerOptions trainer_options(const json& j) {
  const json &t = j["training"], &par = j["parallel"], &out = j["output"];
  TrainerOptions to;
  config::set_trainer_fields(j, to);  // the keys the trainer takes as they are (config_schema.cpp)
  to.on_nonfinite = parse_nonfinite_policy(t["on_nonfinite"].get<std::string>());
  to.loss_scale.enabled = parse_precision(t["precision"].get<std::string>()) == Precision::fp16;
  to.sync.algorithm = parse_sync_algorithm(par["model_sync_alg"].get<std::string>());
  to.sync.participation =
      parse_sync_participation(par["model_sync_participation"].get<std::string>());
  to.sync.exchange.bucket_bytes =
      static_cast<std::size_t>(par["bucket_size_mb"].get<double>() * 1024.0 * 1024.0);
  to.optimizer_name = j["optimizer"]["name"].get<std::string>();
  const std::string progress = out["progress"].get<std::string>();
  to.progress = progress == "bar"     ? ProgressStyle::bar
                : progress == "lines" ? ProgressStyle::lines
                : progress == "none"  ? ProgressStyle::none
                                      : ProgressStyle::automatic;
  return to;
}

}  // namespace

namespace {

// This rank's dataset object: with per-rank datasets (parallel.shared_data false) every "{rank}"
// in its strings, nested ones too, becomes the rank. A shared dataset has one path for all.
json rank_dataset(json dataset, bool shared, int rank, const std::string& where) {
  const std::string mark = "{rank}";
  std::function<void(json&, const std::string&)> visit = [&](json& v, const std::string& key) {
    if (v.is_string()) {
      std::string text = v.get<std::string>();
      if (text.find(mark) == std::string::npos) return;
      if (shared)
        throw Error(where + ": dataset." + key + ": \"" + text +
                    "\" names a per-rank dataset ({rank}), "
                    "which needs parallel.shared_data false (--no-shared-data)");
      for (std::size_t at; (at = text.find(mark)) != std::string::npos;)
        text.replace(at, mark.size(), std::to_string(rank));
      v = text;
    } else if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it)
        visit(it.value(), key + (key.empty() ? "" : ".") + it.key());
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) visit(v[i], key + "[" + std::to_string(i) + "]");
    }
  };
  visit(dataset, "");
  return dataset;
}

// The configured metrics whose plugin says a higher value is better ("better": "max").
std::set<std::string> maximised_metrics(const Registry& registry, const json& metrics) {
  std::set<std::string> names;
  for (const json& m : metrics) {
    const std::string name = (m.is_string() ? m : m["name"]).get<std::string>();
    const PluginRecord* record = registry.find("metric", name, Device::cpu);
    if (record && record->traits.maximise) names.insert(record->name);
  }
  return names;
}

}  // namespace

// The steps, in order: the device and the communicators, the dataset, the model, the optimizer
// with the weights to start from, the loss, metrics and schedulers, the trainer. Before anything
// collective the ranks check they run one experiment, and after the files are read that they
// read the same data and model.
Experiment::Experiment(const ExperimentConfig& config, const Registry& registry,
                       std::shared_ptr<Dataset> dataset)
    : config_(config), dataset_(std::move(dataset)) {
  const std::string where = config_.where();
  if (dataset_ && config_.json["dataset"]["name"] == "") config_.json["dataset"]["name"] = "arrays";
  config_.json = with_default_plugins(config_.json, registry, where);
  const json& j = config_.json;
  initialize_runtime(static_cast<int>(j["training"]["threads"].get<std::int64_t>()));
  const Device device = parse_device(j["device"].get<std::string>());
  open_device_and_ranks(registry, device);
  const ModelOptions model_options = open_dataset(registry, device);
  build_model(registry, model_options);
  const std::optional<CheckpointInfo> resumed = open_optimizer(registry, device);
  check_ranks_agree(*comm_, data_facts(resumed), where);
  open_loss_and_metrics(registry, device);
  TrainerOptions to = trainer_options(j);
  to.maximised_metrics = maximised_metrics(registry, j["metrics"]);
  energy_meter_ = EnergyMeter::open(registry, j["output"]["energy"], where + ": output.energy",
                                    energy_unavailable_);
  to.measure_energy = j["output"]["energy"] != "none";
  to.sync.exchange.device_comm = device_comm_.get();
  to.sync.exchange.codec = codec_.get();
  // avail2all over a communicator that lets ranks leave (tcp, mqtt): the others go on without a
  // rank that leaves. Device exchanges, and codecs that sum by their own collectives, need every
  // rank.
  if (to.sync.participation == SyncParticipation::avail2all && comm_->size() > 1) {
    const bool codec_needs_all = codec_ && !codec_->survives_departures();
    if (codec_needs_all || device != Device::cpu)
      log_info("parallel.model_sync_participation avail2all: with " +
               (codec_needs_all ? "the codec " + plugin_choice(j["parallel"]["codec"]).name +
                                      " (its own collectives need every rank)"
                                : std::string("a model on a device")) +
               ", a rank that leaves ends the run");
    else
      to.sync.ranks_may_leave = to.sync.exchange.ranks_may_leave = comm_->let_ranks_leave();
  }
  if (resumed) {
    to.start = resumed->position;
    to.resumed_schedulers = resumed->schedulers;
    to.resumed_residuals = resumed->exchange_residuals;
    to.resumed_codec_states = resumed->exchange_codec_states;
    if (resumed->learning_rate > 0) optimizer_->set_learning_rate(resumed->learning_rate);
    if (resumed->loss_scale > 0 && to.loss_scale.enabled && to.loss_scale.dynamic) {
      to.loss_scale.initial = resumed->loss_scale;  // where the interrupted run's scale was
      to.loss_scale.good_steps = resumed->loss_scale_good_steps;
    }
    to.seed = resumed->seed;  // the shuffle order of the interrupted run
  }
  trainer_ = std::make_unique<Trainer>(*model_, *dataset_, *optimizer_, *loss_, metrics_,
                                       schedulers_, *comm_, to);
}

// One GPU per process, picked by its local rank; the host communicator, the ranks' agreement on
// the experiment's keys, and the device communicator of several GPU ranks.
void Experiment::open_device_and_ranks(const Registry& registry, Device device) {
  const json& j = config_.json;
  const std::string where = config_.where();
  if (device != Device::cpu) {
    auto runtime =
        registry.create_as<DeviceRuntime>("device", to_string(device), Params(), {}, device);
    runtime->open(local_rank(), Params(j["gpu"], where + ": gpu"));
    install_device_runtime(runtime);
  }
  const PluginChoice communicator = plugin_choice(j["parallel"]["communicator"]);
  comm_ = open_communicator(communicator.name, registry, where, communicator.parameters);
  const json& simulated = j["parallel"]["simulated_network"];
  const NetworkModel network{simulated["latency_us"].get<double>(),
                             simulated["bandwidth_gbps"].get<double>()};
  if (network.active() && comm_->size() > 1)
    comm_ = std::make_shared<SimulatedNetwork>(comm_, network);
  // The codec of what goes over the wire: "none" (or PyDTNN 3.x's float32 and float64), the plain
  // sums; else a codec plugin by name or {name, parameters}.
  const PluginChoice codec = plugin_choice(j["parallel"]["codec"]);
  if (codec.name != "none" && codec.name != "float32" && codec.name != "float64") {
    codec_ = registry.create_as<Codec>("codec", codec.name,
                                       Params(codec.parameters, where + ": parallel.codec"));
    if (j["training"]["dtype"] != "float32" || device != Device::cpu)
      throw Error(where +
                  ": parallel.codec: codecs carry float32 models on the cpu; this model is " +
                  j["training"]["dtype"].get<std::string>() + " on " + to_string(device) +
                  " (set parallel.codec \"none\")");
  }
  comm_->set_timeout(j["parallel"]["timeout_s"].get<double>());
  set_log_rank(comm_->rank(), comm_->size());
  check_ranks_agree(*comm_, experiment_facts(j), where);
  agree_avx512_vector_width(*comm_);  // before the model's plugins choose their kernels
  if (codec_) codec_->join(*comm_);   // the ranks agree on the same codec above
  if (j["parallel"]["mode"] == "sequential" && comm_->size() > 1)
    throw Error(where + ": parallel.mode is \"sequential\" but " + std::to_string(comm_->size()) +
                " processes were started: use \"data\" or \"auto\" (--parallel data), or run "
                "one process");
  if (device != Device::cpu && comm_->size() > 1 && j["gpu"]["nccl"].get<bool>())
    device_comm_ = open_device_communicator(registry, device, *comm_);
}

// The dataset plugin (its parameters are the dataset object's keys the schema does not hold), a
// batch of it checked against memory, and its transforms; returns the model's options, sized for
// the largest batch this rank runs.
ModelOptions Experiment::open_dataset(const Registry& registry, Device device) {
  const json& j = config_.json;
  const json& t = j["training"];
  const std::string where = config_.where();
  static const std::vector<std::string> kDatasetCoreKeys = [] {
    const json defaults = experiment_defaults();
    std::vector<std::string> keys;
    for (auto it = defaults["dataset"].begin(); it != defaults["dataset"].end(); ++it)
      keys.push_back(it.key());
    return keys;
  }();
  if (!dataset_)  // else the caller's (the constructor's argument)
    dataset_ = registry.create_as<Dataset>(
        "dataset", j["dataset"]["name"].get<std::string>(),
        Params(rank_dataset(j["dataset"], j["parallel"]["shared_data"].get<bool>(), comm_->rank(),
                            where),
               where + ": dataset"),
        kDatasetCoreKeys);
  ModelOptions mo;
  mo.dtype = parse_dtype(t["dtype"].get<std::string>());
  mo.precision = *parse_precision(t["precision"].get<std::string>());
  if (mo.precision != Precision::fp32 && mo.dtype != DType::float32)
    throw Error(where + ": training.precision \"" + to_string(mo.precision) +
                "\" rounds float32 operands: it needs training.dtype \"float32\", not \"" +
                to_string(mo.dtype) + "\"");
  if (mo.precision != Precision::fp32 && device != Device::cpu)
    throw Error(where + ": training.precision \"" + to_string(mo.precision) +
                "\" runs on the cpu so far; on a GPU use gpu.tf32 for its tensor cores");
  mo.saved_activations = *parse_precision(t["saved_activations"].get<std::string>());
  if (mo.saved_activations != Precision::fp32 &&
      (mo.dtype != DType::float32 || device != Device::cpu))
    throw Error(where +
                ": training.saved_activations \"bf16\" packs float32 activations on the "
                "cpu: it needs training.dtype \"float32\" and the cpu");
  mo.device = device;
  // "auto": NHWC on the cpu (what its algorithms are fastest in), NCHW on a GPU (cuDNN's).
  mo.layout = t["tensor_format"] == "auto" ? (device == Device::cpu ? Layout::nhwc : Layout::nchw)
                                           : parse_layout(t["tensor_format"].get<std::string>());
  const BatchPlan plan = BatchPlan::of(t["batch_size"].get<std::int64_t>(),
                                       t["global_batch_size"].get<std::int64_t>(), comm_->size());
  mo.max_batch = std::max({plan.rank_max, t["batch_size"].get<std::int64_t>(),
                           t["eval_batch_size"].get<std::int64_t>()});
  check_batch_fits(mo.max_batch, mo.dtype, mo.layout);
  // One token or one class: every target is it, the loss is 0 from the first step, and a run
  // that looks perfect has learnt nothing.
  const std::string dataset_name = "dataset '" + j["dataset"]["name"].get<std::string>() + "'";
  if (dataset_->vocabulary_size() == 1)
    log_warning(dataset_name +
                ": a vocabulary of one token: every target is that token, so the "
                "loss is 0 whatever the model learns");
  else if (!dataset_->value_labels() && dataset_->num_classes() == 1)
    log_warning(dataset_name +
                ": one class: every label is that class, so the loss is 0 "
                "whatever the model learns");
  TransformOptions transform;
  transform.central_crop = j["dataset"]["transform_central_crop"].get<double>();
  transform.resize_height = transform.resize_width =
      j["dataset"]["transform_resize"].get<std::int64_t>();
  if (transform.transforms())
    dataset_ = std::make_shared<TransformedDataset>(dataset_, transform, mo.max_batch, mo.dtype,
                                                    mo.layout);
  return mo;
}

// A batch of the dataset's samples must be a size, and fit in memory, before anything holds one.
void Experiment::check_batch_fits(std::int64_t max_batch, DType dtype, Layout layout) const {
  const Shape sample = dataset_->sample_shape(layout);
  const Shape batch = sample.with_batch(max_batch);
  const auto elements = checked_product(std::span(batch.begin(), batch.end()));
  const std::string what = config_.where() + ": dataset '" +
                           config_.json["dataset"]["name"].get<std::string>() + "': a batch of " +
                           std::to_string(max_batch) + " samples of shape " + sample.str();
  if (!elements) throw Error(what + " has more than 2^63 elements");
  const auto bytes = checked_mul(*elements, static_cast<std::int64_t>(dtype_size(dtype)));
  if (!bytes) throw Error(what + " needs more than 2^63 bytes");
  check_fits_in_memory(static_cast<std::size_t>(*bytes), what);
}

// The model file (or object) built for the dataset's samples, and checked against its classes.
void Experiment::build_model(const Registry& registry, ModelOptions mo) {
  const json& j = config_.json;
  const std::string where = config_.where();
  ModelSpec spec =
      j["model"].is_object()
          ? parse_model_spec(j["model"], where + ": model", config_.file)
          : load_model_spec(resolve_model_path(j["model"].get<std::string>(), config_.file));
  if (spec.name.empty()) spec.name = "model";
  mo.device_params = Params(j["gpu"], where + ": gpu");
  mo.seed = j["training"]["seed"].get<std::uint64_t>();
  mo.conv_algorithm = j["conv"]["algorithm"].get<std::string>();
  // Checked whether or not the model has a convolution: a misspelt --conv-variant is never taken.
  registry.require("conv", mo.conv_algorithm, where + ": conv.algorithm");
  mo.conv_params = Params(j["conv"], where + ": conv");
  mo.shared_workspace = j["conv"]["workspace"] == "shared";
  mo.fusions = enabled_fusions(j["fusion"], registry, mo.device, where);
  if (comm_->size() > 1) mo.communicator = comm_.get();
  substitute_sizes(spec.layers, {{"$classes", spec.classes.value_or(dataset_->num_classes())},
                                 {"$vocab", dataset_->vocabulary_size()},
                                 {"$source_length", dataset_->source_length()}});
  model_ = std::make_unique<Model>(spec, mo, dataset_->sample_shape(mo.layout), registry);
  model_spec_ = spec;
  const std::string dataset = "dataset '" + j["dataset"]["name"].get<std::string>() + "'";
  if (dataset_->class_id_labels()) {  // one class id per position: {positions..., classes} out
    Shape expected = dataset_->label_shape();
    expected.push_back(dataset_->num_classes());
    if (!(model_->output_shape() == expected))
      throw Error(where + ": the model's output " + model_->output_shape().str() +
                  " does not match " + dataset + ", which labels each of " +
                  dataset_->label_shape().str() + " positions with one of " +
                  std::to_string(dataset_->num_classes()) + " classes: expected " + expected.str());
  } else if (model_->output_shape().numel() != dataset_->num_classes()) {
    throw Error(where + ": the model's output " + model_->output_shape().str() +
                " does not match the " + std::to_string(dataset_->num_classes()) + " classes of " +
                dataset +
                (spec.classes ? " (model '" + spec.name +
                                    "' pins \"classes\": " + std::to_string(*spec.classes) + ")"
                              : std::string()));
  }
}

// PyDTNN's learning-rate scaling: the learning rate times the ranks, when the key is true, or when
// it is "auto" and no global batch is given (3.x's rule: N ranks of a batch each then make a
// global batch N times as large). A resumed checkpoint's learning rate wins afterwards.
void Experiment::scale_learning_rate() {
  const json& scaling = config_.json["optimizer"].value("learning_rate_scaling", json(false));
  const bool scale = scaling == "auto"
                         ? config_.json["training"]["global_batch_size"].get<std::int64_t>() == 0
                         : scaling.get<bool>();
  if (!scale || comm_->size() == 1) return;
  const double given = optimizer_->learning_rate();
  optimizer_->set_learning_rate(given * comm_->size());
  char line[160];
  std::snprintf(line, sizeof line,
                "learning rate %g x %d ranks = %g (optimizer.learning_rate_scaling%s)", given,
                comm_->size(), optimizer_->learning_rate(),
                scaling == "auto" ? " \"auto\": no global batch size given" : "");
  log_info(line);
}

// The optimizer over the model's parameters; the weights to start from (a checkpoint or PyDTNN's
// .npz), then a checkpoint to resume (which wins). Returns what the resumed checkpoint said.
std::optional<CheckpointInfo> Experiment::open_optimizer(const Registry& registry, Device device) {
  const json& j = config_.json;
  const json& t = j["training"];
  const std::string where = config_.where();
  const std::string name = j["optimizer"]["name"].get<std::string>();
  optimizer_ = registry.create_as<Optimizer>("optimizer", name,
                                             Params(j["optimizer"], where + ": optimizer"),
                                             {"name", "learning_rate_scaling"}, device);
  optimizer_->build(model_->parameters());
  scale_learning_rate();
  if (const std::string weights = t["weights_and_bias_filename"].get<std::string>();
      !weights.empty()) {
    if (std::filesystem::path(weights).extension() == ".npz") {
      load_pydtnn_weights(*model_, weights);   // PyDTNN's format
    } else if (is_int8_model_file(weights)) {  // dtnn quantize's: evaluation only
      if (!t["evaluate_only"].get<bool>() && t["epochs"].get<std::int64_t>() > 0)
        throw Error(where + ": training.weights_and_bias_filename: " + weights +
                    " is an int8 model (dtnn quantize), which only evaluates: add "
                    "--evaluate-only (training.evaluate_only)");
      if (device != Device::cpu)
        throw Error(where + ": training.weights_and_bias_filename: " + weights +
                    " is an int8 model, which runs on the cpu only");
      load_int8_model(weights, *model_);
    } else {
      load_checkpoint(weights, *model_);
    }
  }
  const std::string resume = t["resume"].get<std::string>();
  if (resume.empty()) return std::nullopt;
  const std::filesystem::path from = resume;  // relative to the working folder, as --history
  const std::filesystem::path file =
      std::filesystem::is_directory(from) ? latest_checkpoint(from) : from;
  CheckpointInfo resumed = load_checkpoint(file, *model_, optimizer_.get(), name);
  for (const SchedulerState& sc : resumed.schedulers)
    if (!registry.find("scheduler", sc.name))
      throw Error(file.string() + ": checkpoint holds the state of scheduler '" + sc.name +
                  "', which is no installed scheduler plugin (dtnn plugins lists them)");
  log_info("resuming from " + file.string() + " (epoch " + std::to_string(resumed.position.epoch) +
           " done)");
  return resumed;
}

// What the files behind the keys gave this rank: the data, the model, the resumed position.
std::vector<std::pair<std::string, std::string>> Experiment::data_facts(
    const std::optional<CheckpointInfo>& resumed) const {
  const Layout layout = model_->options().layout;
  // Per-rank datasets may hold different numbers of samples; their shape and classes agree.
  const bool shared = config_.json["parallel"]["shared_data"].get<bool>();
  return {{"dataset: samples (train, test)",
           shared ? std::to_string(dataset_->size(Split::train)) + ", " +
                        std::to_string(dataset_->size(Split::test))
                  : std::string("per rank")},
          {"dataset: sample shape", dataset_->sample_shape(layout).str()},
          {"dataset: classes", std::to_string(dataset_->num_classes())},
          {"model: layers and parameters",
           std::to_string(model_->num_layers()) + ", " + std::to_string(model_->parameter_count())},
          {"training.resume: position", resumed ? std::to_string(resumed->position.epoch) + "/" +
                                                      std::to_string(resumed->position.step) + "/" +
                                                      std::to_string(resumed->position.global_step)
                                                : "none"}};
}

// The loss and the metrics on the model's device where they have a twin there (a metric reads
// the predictions where they are; one without a twin, a host copy), and the schedulers.
void Experiment::open_loss_and_metrics(const Registry& registry, Device device) {
  const json& j = config_.json;
  const std::string where = config_.where();
  PluginChoice loss = plugin_choice(j["loss"]);
  if (loss.parameters.value("weights", json()) == "frequency") {
    const ModelOptions& mo = model_->options();
    const std::vector<double> weights =
        frequency_weights(training_class_counts(*dataset_, mo.dtype, mo.layout, mo.max_batch));
    loss.parameters["weights"] = weights;
    config_.json["loss"] = loss.parameters;  // the summary and the run's files show the weights
    config_.json["loss"]["name"] = loss.name;
  }
  loss_ = registry.create_as<Loss>("loss", loss.name, Params(loss.parameters, where + ": loss"), {},
                                   device);
  for (std::size_t i = 0; i < j["metrics"].size(); ++i) {  // a name, or {"name", parameters}
    const json& m = j["metrics"][i];
    const bool named = m.is_string();
    const std::string name = (named ? m : m["name"]).get<std::string>();
    const PluginRecord* twin = registry.find("metric", name, device);
    metrics_.push_back(registry.create_as<Metric>(
        "metric", name,
        Params(named ? json::object() : m, where + ": metrics[" + std::to_string(i) + "]"),
        {"name"}, twin && twin->status == PluginRecord::Status::ok ? device : Device::cpu));
  }
  for (std::size_t i = 0; i < j["schedulers"].size(); ++i) {
    const json& s = j["schedulers"][i];
    schedulers_.push_back(registry.create_as<Scheduler>(
        "scheduler", s["name"].get<std::string>(),
        Params(s, where + ": schedulers[" + std::to_string(i) + "]"), {"name"}));
  }
}

Experiment::~Experiment() = default;

std::string Experiment::summary() const {
  std::string params;
  flatten(config_.json, "", params);
  const RuntimeInfo& rt = runtime_info();
  char head[256];
  std::snprintf(head, sizeof head, "dtnn: %d thread(s), %d rank(s), BLIS %s kernels '%s'\n",
                rt.threads, comm_->size(), rt.blis_version.c_str(), rt.blis_kernels.c_str());
  std::string devices;
  if (const DeviceRuntime* runtime = find_device_runtime(model_->options().device))
    devices += "Device: " + runtime->describe() + "\n";
  if (const GradientExchange* exchange = trainer_->exchange())
    devices += std::string("Gradients: ") + to_string(exchange->route()) +
               (device_comm_ ? " (" + device_comm_->describe() + ")" : std::string()) + ", " +
               std::to_string(exchange->num_buckets()) + " bucket(s)" +
               (codec_ ? ", codec " + config_.json["parallel"]["codec"].dump() : std::string()) +
               "\n";
  std::size_t optimizer_state = 0;
  for (const Tensor& t : optimizer_->state()) optimizer_state += t.bytes();
  return std::string(head) + devices + "Parameters (" + config_.where() + "):\n" + params +
         model_->summary() + model_->memory_table(optimizer_state) +
         "Dataset: " + std::to_string(trainer_->train_size()) + " training, " +
         std::to_string(trainer_->validation_size()) + " validation, " +
         std::to_string(trainer_->test_size()) + " test samples" +
         (comm_->size() > 1 && !config_.json["parallel"]["shared_data"].get<bool>()
              ? " (rank 0's own: every rank reads its own dataset)"
              : "") +
         "\n";
}

namespace {

// The trace file a run writes ("" for none): output.trace, else trace.json with output.tracing.
std::string trace_file_of(const json& out) {
  std::string file = out["trace"].get<std::string>();
  if (file.empty() && out["tracing"].get<bool>()) file = "trace.json";
  return file;
}

// The history's format: output.history_format, or for "auto" the file's extension, in any case.
std::string history_format_of(const json& out, const std::string& file) {
  std::string format = out["history_format"].get<std::string>();
  if (format != "auto") return format;
  std::string extension = std::filesystem::path(file).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".json"                          ? "json"
         : extension == ".yaml" || extension == ".yml" ? "yaml"
                                                       : "pydtnn";
}

}  // namespace

void Experiment::check_outputs() const {
  const json& out = config_.json["output"];
  if (const std::string history = out["history"].get<std::string>(); !history.empty())
    check_output_file(history, "output.history");
  if (const std::string weights = out["weights_npz"].get<std::string>(); !weights.empty())
    check_output_file(weights, "output.weights_npz");
  if (const std::string trace = trace_file_of(out); !trace.empty())
    for (const std::string& f : trace::trace_files(trace)) check_output_file(f, "output.trace");
  if (const std::string board = out["tensorboard"].get<std::string>(); !board.empty())
    TensorBoardWriter::make_folder(board);
}

void Experiment::save_checkpoint(const std::filesystem::path& file) {
  if (comm_->rank() != 0) return;
  write_file_atomically(file.string(), encode_checkpoint(*model_, optimizer_.get(),
                                                         trainer_->current_checkpoint_info()));
}

History Experiment::run() {
  const std::string progress = config_.json["output"]["progress"].get<std::string>();
  if (comm_->rank() == 0) check_outputs();  // before the first step, not after the last
  if (comm_->rank() == 0 && progress != "none") {
    std::fputs(summary().c_str(), stdout);
    std::fflush(stdout);
  }
  // Each output is written whatever became of the others; one error then names every failure.
  std::vector<std::string> failed;
  auto attempt = [&failed](const std::function<void()>& write) {
    try {
      write();
    } catch (const Error& e) {
      failed.emplace_back(e.what());
    }
  };
  // The meter is the run's while it trains (spans and best_of read it), and the one before after.
  struct Installed {
    EnergyMeter* before = energy::current();
    ~Installed() { energy::install(before); }
  } installed;
  energy::install(energy_meter_.get());
  History h = traced([&] { return trainer_->fit(); }, attempt);
  if (energy_meter_) h.energy_source = energy_meter_->describe();
  // (The profile, when asked for, printed them already.)
  if (comm_->rank() == 0 && progress != "none" && !config_.json["output"]["profile"].get<bool>()) {
    std::string reports;
    for (std::size_t i = 0; i < model_->num_layers(); ++i) reports += model_->layer(i).report();
    if (!reports.empty()) std::fputs(reports.c_str(), stdout);
  }
  const std::string history_file = config_.json["output"]["history"].get<std::string>();
  if (!history_file.empty() && comm_->rank() == 0) {
    const std::string format = history_format_of(config_.json["output"], history_file);
    auto yaml = [&] {  // 3.x's first document: the run's properties
      nlohmann::ordered_json properties = {{"model_name", model_->name()},
                                           {"parameters", model_->parameter_count()},
                                           {"ranks", comm_->size()}};
      properties["config"] = config_.json;
      return h.to_pydtnn_yaml(properties);
    };
    attempt([&] {
      write_file_atomically(history_file, format == "json"   ? h.to_json()
                                          : format == "yaml" ? yaml()
                                                             : h.to_pydtnn_text());
    });
  }
  const std::string weights = config_.json["output"]["weights_npz"].get<std::string>();
  if (!weights.empty() && comm_->rank() == 0 && h.stopped.empty())
    attempt([&] { save_pydtnn_weights(*model_, weights); });
  if (!failed.empty()) {
    std::string all;
    for (const std::string& f : failed) all += (all.empty() ? "" : "; ") + f;
    throw Error(all);
  }
  return h;
}

// Runs fit with the trace recording when rank 0's output.trace, output.tracing or output.profile
// asks for it (a decision every rank takes alike: output keys may differ between ranks), then
// writes the trace (rank 0, every rank's events) and adds the profile to the history.
History Experiment::traced(const std::function<History()>& fit,
                           const std::function<void(const std::function<void()>&)>& attempt) {
  const json& out = config_.json["output"];
  const std::string file = trace_file_of(out);
  double wanted[2] = {file.empty() ? 0.0 : 1.0, out["profile"].get<bool>() ? 1.0 : 0.0};
  if (comm_->size() > 1) comm_->broadcast(wanted, 2, DType::float64, 0, "trace options");
  if (wanted[0] == 0 && wanted[1] == 0) return fit();  // (check_outputs checked the name)
  const std::int64_t offset = wanted[0] != 0 ? trace::clock_offset_ns(*comm_) : 0;
  trace::start({true, out["trace_max_events"].get<std::size_t>()});
  History h;
  try {
    h = fit();
  } catch (...) {
    trace::stop();
    throw;
  }
  trace::stop();
  const trace::Recorded recorded = trace::collect();
  if (recorded.dropped > 0)
    log_warning("trace: " + std::to_string(recorded.dropped) +
                " events were dropped past output.trace_max_events (" +
                std::to_string(recorded.max_events) + "): the trace holds the first ones");
  if (wanted[1] != 0 && comm_->rank() == 0) {
    json profile = run_profile::to_json(recorded, energy_meter_ != nullptr);
    if (energy_meter_)
      profile["energy_source"] = energy_meter_->describe();
    else
      profile["energy_unavailable"] = energy_unavailable_;
    profile["batch_size"] = trainer_->batch_plan().share(0);  // whose times these are
    // The yardstick of the step's GFLOP/s (about 0.1 s: measured only for a profile).
    if (model_->options().device == Device::cpu)
      profile["fp32_peak_gflops"] = measure_fp32_peak().gflops;
    // What the layers' algorithms said of their choices (best_of: times and errors), a line each.
    json reports = json::array();
    for (std::size_t i = 0; i < model_->num_layers(); ++i) {
      std::istringstream lines(model_->layer(i).report());
      for (std::string line; std::getline(lines, line);)
        if (!line.empty()) reports.push_back(line);
    }
    profile["algorithm_reports"] = reports;
    h.profile = profile.dump();
    if (out["progress"].get<std::string>() != "none")
      std::fputs(run_profile::table(profile).c_str(), stdout);
  }
  if (wanted[0] != 0) {
    const auto ranks = trace::gather(*comm_, recorded, offset);
    if (comm_->rank() == 0)
      attempt([&] {
        std::string files;
        for (const std::string& f : trace::write_trace(file, ranks))
          files += (files.empty() ? "" : ", ") + f;
        log_info("trace: " + files + " written");
      });
  }
  return h;
}

int Experiment::rank() const { return comm_->rank(); }

}  // namespace dtnn
