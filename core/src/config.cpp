#include "dtnn/config.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ExperimentConfig::where() const { return file.empty() ? "config" : file.string(); }

namespace {

// A parser callback that refuses nesting deeper than kMaxJsonDepth while parsing, before any of
// nlohmann's recursive copies, comparisons or dumps meets the document.
json::parser_callback_t depth_guard(const std::string& where) {
  return [where](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth)
      throw Error(where + ": arrays and objects nested more than " +
                  std::to_string(kMaxJsonDepth) + " deep (a model's blocks nest far less)");
    return true;
  };
}

}  // namespace

json parse_json(const std::string& text, const std::string& where) {
  try {
    return json::parse(text, depth_guard(where), true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    // parse_error knows the byte; out_of_range (a number such as 1e400) does not.
    const auto* parse = dynamic_cast<const json::parse_error*>(&e);
    if (!parse) throw Error(where + ": invalid JSON: " + msg);
    const std::size_t offset = std::min<std::size_t>(parse->byte ? parse->byte - 1 : 0, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
    const std::size_t last_nl = text.rfind('\n', offset ? offset - 1 : 0);
    const std::size_t column =
        last_nl == std::string::npos || offset == 0 ? offset + 1 : offset - last_nl;
    throw Error(where + ":" + std::to_string(line) + ":" + std::to_string(column) +
                ": invalid JSON (byte " + std::to_string(offset) + "): " + msg);
  }
}

json read_json_file(const fs::path& file) { return parse_json(read_file(file), file.string()); }

json experiment_defaults() {
  return json::parse(R"({
    "model": "",
    "dataset": {"name": "", "validation_split": 0.0, "train_limit": 0, "test_limit": 0,
                "test_as_validation": false, "percentage": 0.0, "augment_horizontal_flip": 0.0,
                "augment_random_crop": 0.0, "augment_crop_padding": 4, "normalize_scale": 1.0,
                "normalize_offset": 0.0, "normalize_mean": [], "normalize_std": [],
                "transform_central_crop": 1.0, "transform_resize": 0, "prefetch": false,
                "augment_vertical_flip": 0.0, "augment_rotate": 0.0, "augment_rotate_degree": 90.0,
                "augment_brightness": 0.0, "augment_brightness_factor": 1.0, "augment_contrast": 0.0,
                "augment_contrast_factor": 1.0, "augment_saturation": 0.0,
                "augment_saturation_factor": 1.0, "augment_blur": 0.0, "augment_blur_size": 16.0,
                "augment_mask": 0.0, "augment_mask_size": 16, "augment_perspective": 0.0,
                "augment_perspective_factor": 0.25},
    "training": {"batch_size": 64, "eval_batch_size": 0, "epochs": 1, "steps_per_epoch": 0,
                 "dtype": "float32", "tensor_format": "auto", "seed": 1, "shuffle": true,
                 "evaluate": true, "evaluate_only": false, "threads": 0, "global_batch_size": 0,
                 "resume": "", "weights_and_bias_filename": "", "on_nonfinite": "stop"},
    "device": "cpu",
    "gpu": {"tf32": false, "cudnn_auto_conv_alg": true, "gpudirect": false, "nccl": true},
    "optimizer": {"name": ""},
    "loss": "",
    "metrics": null,
    "schedulers": [],
    "conv": {"algorithm": "", "workspace": "shared"},
    "fusion": {},
    "parallel": {"mode": "auto", "communicator": "auto", "bucket_size_mb": 4.0, "blocking": false,
                 "model_sync_freq": 0, "model_sync_alg": "wavg", "model_sync_participation": "all",
                 "model_sync_min_avail": 0, "initial_model_sync": true, "final_model_sync": true,
                 "timeout_s": 600},
    "output": {"history": "", "progress": "auto", "checkpoint_dir": "", "checkpoint_keep": 3,
               "checkpoint_overwrite": false, "weights_npz": "", "history_format": "auto"}
  })");
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    std::vector<std::size_t> row(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (word[i - 1] == c[j - 1] ? 0u : 1u)});
        diag = up;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= limit ? best : "";
}

void apply_override(json& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--set expects key=value (e.g. training.epochs=2), got '" + assignment + "'");
  std::string key = assignment.substr(0, eq), raw = assignment.substr(eq + 1);
  json value = json::parse(raw, depth_guard("--set " + key), false);
  if (value.is_discarded()) {  // mnist, NHWC, a path: plain strings, which JSON holds as UTF-8
    value = raw;
    try {
      (void)value.dump();
    } catch (const json::type_error&) {
      throw Error("--set " + key + ": the value is not valid UTF-8 text");
    }
  }
  json* node = &config;
  std::stringstream ss(key);
  std::string part;
  std::vector<std::string> parts;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) throw Error("--set " + assignment + ": empty key component");
    if (!node->is_object())
      throw Error("--set " + assignment + ": '" + parts[i - 1] + "' is not an object");
    if (i + 1 == parts.size()) {
      (*node)[parts[i]] = value;
    } else {
      node = &(*node)[parts[i]];
      if (node->is_null()) *node = json::object();
    }
  }
}

namespace {

// Plugin parameters, and the fusion options the layer plugins declare: checked later, against the
// plugins.
const std::set<std::string> kOpenObjects = {"dataset", "optimizer", "conv", "fusion"};

[[noreturn]] void type_error(const std::string& where, const std::string& path,
                             const std::string& expected, const json& got) {
  throw Error(where + ": " + path + ": expected " + expected + ", got " + got.dump());
}

void check_value(const json& def, const json& got, const std::string& where,
                 const std::string& path) {
  if (path == "model") {
    if (!got.is_string() && !got.is_object())
      type_error(where, path, "a model file path, a model name or a model object", got);
    return;
  }
  if (def.is_number_integer()) {
    if (!got.is_number_integer()) type_error(where, path, "an integer", got);
  } else if (def.is_number()) {
    if (!got.is_number()) type_error(where, path, "a number", got);
  } else if (def.is_boolean()) {
    if (!got.is_boolean()) type_error(where, path, "true or false", got);
  } else if (def.is_string()) {
    if (!got.is_string()) type_error(where, path, "a string", got);
  } else if (def.is_array()) {
    if (!got.is_array()) type_error(where, path, "a list", got);
  } else if (def.is_object()) {
    if (!got.is_object()) type_error(where, path, "an object", got);
  }
}

void merge_checked(json& cfg, const json& defaults, const std::string& where,
                   const std::string& prefix, bool open) {
  std::vector<std::string> valid;
  for (auto it = defaults.begin(); it != defaults.end(); ++it) valid.push_back(it.key());
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    auto def = defaults.find(it.key());
    if (def == defaults.end()) {
      if (open) continue;  // a plugin parameter: the registry checks it against the plugin
      std::string hint = closest_match(it.key(), valid);
      throw Error(where + ": unknown key '" + path + "'" +
                  (hint.empty()
                       ? ""
                       : " (did you mean '" + (prefix.empty() ? "" : prefix + ".") + hint + "'?)"));
    }
    check_value(*def, it.value(), where, path);
    if (def->is_object() && it.value().is_object() && path != "model")
      merge_checked(it.value(), *def, where, path, kOpenObjects.count(path) > 0);
  }
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    if (!cfg.contains(it.key())) cfg[it.key()] = it.value();
}

void require(bool ok, const std::string& where, const std::string& path,
             const std::string& expected, const json& got) {
  if (!ok) type_error(where, path, expected, got);
}

}  // namespace

void validate_experiment(json& config, const std::string& where) {
  if (!config.is_object()) throw Error(where + ": expected a JSON object at the top level");
  merge_checked(config, experiment_defaults(), where, "", false);
  const json& t = config["training"];
  require(t["batch_size"].get<std::int64_t>() > 0, where, "training.batch_size",
          "a positive integer", t["batch_size"]);
  require(t["eval_batch_size"].get<std::int64_t>() >= 0, where, "training.eval_batch_size",
          "an integer >= 0", t["eval_batch_size"]);
  require(t["epochs"].get<std::int64_t>() >= 0, where, "training.epochs", "an integer >= 0",
          t["epochs"]);
  require(t["steps_per_epoch"].get<std::int64_t>() >= 0, where, "training.steps_per_epoch",
          "an integer >= 0", t["steps_per_epoch"]);
  require(t["seed"].get<std::int64_t>() >= 0, where, "training.seed", "an integer >= 0", t["seed"]);
  require(t["threads"].get<std::int64_t>() >= 0 && t["threads"].get<std::int64_t>() <= 1024, where,
          "training.threads", "an integer in [0, 1024] (0: all cores)", t["threads"]);
  const json& on_nonfinite = t["on_nonfinite"];
  require(on_nonfinite == "stop" || on_nonfinite == "skip_batch" || on_nonfinite == "ignore", where,
          "training.on_nonfinite", "\"stop\", \"skip_batch\" or \"ignore\"", on_nonfinite);
  const std::string& dtype = t["dtype"].get_ref<const std::string&>();
  require(dtype == "float32" || dtype == "float64", where, "training.dtype",
          "\"float32\" or \"float64\"", t["dtype"]);
  try {
    if (t["tensor_format"] != "auto") parse_layout(t["tensor_format"].get<std::string>());
  } catch (const Error&) {
    type_error(where, "training.tensor_format",
               "\"auto\" (NHWC on the cpu, NCHW on a GPU), \"NHWC\" or \"NCHW\"",
               t["tensor_format"]);
  }
  require(config["device"] == "cpu" || config["device"] == "cuda", where, "device",
          "\"cpu\" or \"cuda\" (one NVIDIA GPU per process)", config["device"]);
  const json& d = config["dataset"];
  require(d["name"].is_string(), where, "dataset.name", "a string", d["name"]);
  double vs = d["validation_split"].get<double>();
  require(vs >= 0.0 && vs < 1.0, where, "dataset.validation_split", "a number in [0, 1)",
          d["validation_split"]);
  require(d["train_limit"].get<std::int64_t>() >= 0, where, "dataset.train_limit",
          "an integer >= 0", d["train_limit"]);
  require(d["test_limit"].get<std::int64_t>() >= 0, where, "dataset.test_limit", "an integer >= 0",
          d["test_limit"]);
  require(d["percentage"].get<double>() >= 0.0, where, "dataset.percentage",
          "a number >= 0 (0: off; below 1: undersampling; above 1: oversampling)", d["percentage"]);
  for (const char* key : {"augment_horizontal_flip", "augment_random_crop", "augment_vertical_flip",
                          "augment_rotate", "augment_brightness", "augment_contrast",
                          "augment_saturation", "augment_blur", "augment_mask",
                          "augment_perspective"}) {
    const double p = d[key].get<double>();
    require(p >= 0.0 && p <= 1.0, where, std::string("dataset.") + key, "a probability in [0, 1]",
            d[key]);
  }
  const json &mean = d["normalize_mean"], &stdv = d["normalize_std"];
  const bool numbers = std::all_of(mean.begin(), mean.end(), [](const json& v) { return v.is_number(); }) &&
                       std::all_of(stdv.begin(), stdv.end(), [](const json& v) {
                         return v.is_number() && v.get<double>() > 0;
                       });
  require(numbers && mean.size() == stdv.size(), where, "dataset.normalize_std",
          "as many positive numbers as dataset.normalize_mean has numbers (per-channel mean and "
          "standard deviation)",
          stdv);
  for (const char* key : {"augment_brightness_factor", "augment_contrast_factor",
                          "augment_saturation_factor", "augment_blur_size", "augment_rotate_degree"})
    require(d[key].get<double>() >= 0.0, where, std::string("dataset.") + key, "a number >= 0",
            d[key]);
  const double perspective = d["augment_perspective_factor"].get<double>();
  require(perspective >= 0.0 && perspective < 0.5, where, "dataset.augment_perspective_factor",
          "a number in [0, 0.5): how far, as a fraction of the size, corners move inwards",
          d["augment_perspective_factor"]);
  require(d["augment_mask_size"].get<std::int64_t>() >= 1, where, "dataset.augment_mask_size",
          "an integer >= 1", d["augment_mask_size"]);
  const double crop = d["transform_central_crop"].get<double>();
  require(crop > 0.0 && crop <= 1.0, where, "dataset.transform_central_crop",
          "the fraction of height and width kept, in (0, 1] (1: off)", d["transform_central_crop"]);
  require(d["transform_resize"].get<std::int64_t>() >= 0, where, "dataset.transform_resize",
          "an integer >= 0 (the side of the resized image; 0: off)", d["transform_resize"]);
  const json& history_format = config["output"]["history_format"];
  require(history_format == "auto" || history_format == "json" || history_format == "pydtnn",
          where, "output.history_format", "\"auto\", \"json\" or \"pydtnn\"", history_format);
  require(d["augment_crop_padding"].get<std::int64_t>() >= 0, where,
          "dataset.augment_crop_padding", "an integer >= 0", d["augment_crop_padding"]);
  require(config["optimizer"]["name"].is_string(), where, "optimizer.name", "a string",
          config["optimizer"]["name"]);
  require(config["conv"]["algorithm"].is_string(), where, "conv.algorithm", "a string",
          config["conv"]["algorithm"]);
  const json& ws = config["conv"]["workspace"];
  require(ws == "shared" || ws == "per_layer", where, "conv.workspace",
          "\"shared\" (one buffer for all layers) or \"per_layer\"", ws);
  require(config["metrics"].is_null() || config["metrics"].is_array(), where, "metrics",
          "a list of metrics", config["metrics"]);
  for (std::size_t i = 0; i < config["metrics"].size(); ++i) {
    const json& m = config["metrics"][i];
    require(m.is_string() || (m.is_object() && m.contains("name") && m["name"].is_string()), where,
            "metrics[" + std::to_string(i) + "]",
            "a metric name, or {\"name\": ..., parameters...}", m);
  }
  for (std::size_t i = 0; i < config["schedulers"].size(); ++i) {
    const json& s = config["schedulers"][i];
    require(s.is_object() && s.contains("name") && s["name"].is_string(), where,
            "schedulers[" + std::to_string(i) + "]", "an object with a \"name\"", s);
  }
  const json& par = config["parallel"];
  const std::string& mode = par["mode"].get_ref<const std::string&>();
  require(mode == "auto" || mode == "sequential" || mode == "data", where, "parallel.mode",
          "\"auto\", \"sequential\" or \"data\"", par["mode"]);
  require(par["bucket_size_mb"].get<double>() > 0, where, "parallel.bucket_size_mb",
          "a number > 0", par["bucket_size_mb"]);
  const std::string& alg = par["model_sync_alg"].get_ref<const std::string&>();
  require(alg == "avg" || alg == "wavg" || alg == "invwavg", where, "parallel.model_sync_alg",
          "\"avg\", \"wavg\" or \"invwavg\"", par["model_sync_alg"]);
  const std::string& part = par["model_sync_participation"].get_ref<const std::string&>();
  require(part == "all" || part == "avail2all", where, "parallel.model_sync_participation",
          "\"all\" or \"avail2all\"", par["model_sync_participation"]);
  require(par["model_sync_min_avail"].get<std::int64_t>() >= 0, where,
          "parallel.model_sync_min_avail", "an integer >= 0", par["model_sync_min_avail"]);
  require(par["timeout_s"].is_number() && par["timeout_s"].get<double>() >= 0, where,
          "parallel.timeout_s", "a number of seconds >= 0 (0: wait forever)", par["timeout_s"]);
  require(t["global_batch_size"].get<std::int64_t>() >= 0, where, "training.global_batch_size",
          "an integer >= 0 (0: batch_size x ranks)", t["global_batch_size"]);
  if (config["optimizer"].contains("learning_rate_scaling"))
    require(config["optimizer"]["learning_rate_scaling"].is_boolean(), where,
            "optimizer.learning_rate_scaling", "true or false",
            config["optimizer"]["learning_rate_scaling"]);
  const std::string& progress = config["output"]["progress"].get_ref<const std::string&>();
  require(progress == "auto" || progress == "bar" || progress == "lines" || progress == "none",
          where, "output.progress", "\"auto\", \"bar\", \"lines\" or \"none\"",
          config["output"]["progress"]);
  require(config["output"]["checkpoint_keep"].get<std::int64_t>() >= 1, where,
          "output.checkpoint_keep", "an integer >= 1", config["output"]["checkpoint_keep"]);
  const json& m = config["model"];
  require(m.is_object() || !m.get<std::string>().empty(), where, "model",
          "a model file, a model name (e.g. \"simplecnn\") or a model object", m);
}

ExperimentConfig make_experiment(json config, const std::vector<std::string>& overrides,
                                 const std::string& where) {
  validate_experiment(config, where);
  if (!overrides.empty()) {
    for (const auto& o : overrides) apply_override(config, o);
    validate_experiment(config, "command line");
  }
  return {std::move(config), {}};
}

ExperimentConfig load_experiment(const fs::path& file, const std::vector<std::string>& overrides) {
  ExperimentConfig cfg = make_experiment(read_json_file(file), overrides, file.string());
  cfg.file = file;
  return cfg;
}

fs::path resolve_model_path(const std::string& model, const fs::path& config_file) {
  std::vector<fs::path> candidates;
  fs::path given(model);
  fs::path config_dir = config_file.empty() ? fs::path(".") : config_file.parent_path();
  if (given.is_absolute()) {
    candidates.push_back(given);
  } else {
    candidates.push_back(config_dir / given);
    candidates.push_back(fs::current_path() / given);
    if (given.extension() != ".json" && !given.has_parent_path()) {
      std::string file = model + ".json";
      candidates.push_back(config_dir / "models" / file);
      candidates.push_back(fs::path(DTNN_SOURCE_DIR) / "configs" / "models" / file);
      candidates.push_back(fs::path(DTNN_INSTALL_PREFIX) / "share" / "dtnn" / "configs" / "models" /
                           file);
    }
  }
  std::string looked;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.lexically_normal();
    looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
  }
  throw Error((config_file.empty() ? std::string("config") : config_file.string()) +
              ": model: cannot find '" + model + "' (looked for " + looked + ")");
}

}  // namespace dtnn
