// dtnn.Experiment: an experiment from a dict, a JSON file or PyDTNN's launcher flags; fit with
// Python callbacks; evaluate; predict on numpy arrays; the model's parameters and gradients as
// numpy arrays that view dtnn's memory; weights saved and loaded.
//
// The GIL is released while dtnn computes (fit, evaluate, predict) and taken again only around a
// callback, on the thread that runs the training loop: OpenMP's threads never touch Python. A
// callback that raises ends fit with that exception, its traceback intact.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>

#include "array_dataset.hpp"
#include "dtnn/checkpoint.hpp"
#include "dtnn/config.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/error.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/launcher_flags.hpp"
#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/pydtnn_weights.hpp"
#include "dtnn/scheduler.hpp"
#include "module_support.hpp"

namespace py = pybind11;

namespace dtnn::python {

namespace {

// What a callback sees at an event, and may change: the learning rate, and whether training
// stops (at the end of the epoch under way, as a scheduler's stop).
struct CallbackState {
  std::int64_t epoch = 0, batch = 0;
  int rank = 0, ranks = 1;
  py::dict logs;
  double learning_rate = 0;
  bool stop_training = false;
};

// A Python object as a trainer callback. An object's on_train_begin, on_epoch_begin,
// on_batch_end, on_epoch_end and on_train_end are called with the state, those it has; a plain
// callable is called at each epoch's end.
class PythonCallback final : public Scheduler {
 public:
  PythonCallback(py::object callback, std::shared_ptr<std::exception_ptr> raised)
      : callback_(std::move(callback)), raised_(std::move(raised)) {}
  ~PythonCallback() override {
    py::gil_scoped_acquire gil;
    callback_ = py::object();
  }
  std::string name() const override { return "python_callback"; }

  void on_train_begin(TrainingState& s) override { call("on_train_begin", s); }
  void on_epoch_begin(TrainingState& s) override { call("on_epoch_begin", s); }
  void on_batch_end(TrainingState& s) override { call("on_batch_end", s); }
  void on_epoch_end(TrainingState& s) override { call("on_epoch_end", s); }
  void on_train_end(TrainingState& s) override { call("on_train_end", s); }

 private:
  void call(const char* event, TrainingState& s) {
    py::gil_scoped_acquire gil;
    py::object method;
    if (py::hasattr(callback_, event))
      method = callback_.attr(event);
    else if (std::strcmp(event, "on_epoch_end") == 0 && !py::hasattr(callback_, "on_batch_end") &&
             PyCallable_Check(callback_.ptr()))
      method = callback_;
    if (!method) return;
    CallbackState state;
    state.epoch = s.epoch;
    state.batch = s.batch;
    state.rank = s.rank;
    state.ranks = s.ranks;
    for (const auto& [key, value] : s.logs) state.logs[py::str(key)] = value;
    state.learning_rate = s.optimizer ? s.optimizer->learning_rate() : 0.0;
    const double before = state.learning_rate;
    py::object handle = py::cast(&state, py::return_value_policy::reference);
    try {
      method(handle);
    } catch (py::error_already_set&) {
      *raised_ = std::current_exception();
      throw Error(std::string("a Python callback raised in ") + event);
    }
    if (state.learning_rate != before && s.optimizer) {
      if (!(state.learning_rate >= 0) || !std::isfinite(state.learning_rate))
        throw Error(std::string(event) + ": a callback set the learning rate to " +
                    std::to_string(state.learning_rate) + ": expected a finite number >= 0");
      s.optimizer->set_learning_rate(state.learning_rate);
    }
    if (state.stop_training) s.stop_training = true;
  }

  py::object callback_;
  std::shared_ptr<std::exception_ptr> raised_;
};

std::vector<std::string> override_list(const py::object& overrides) {
  std::vector<std::string> out;
  if (overrides.is_none()) return out;
  if (py::isinstance<py::dict>(overrides)) {
    for (const auto& [key, value] : overrides.cast<py::dict>())
      out.push_back(py::str(key).cast<std::string>() + "=" + from_python(value).dump());
    return out;
  }
  for (const py::handle item : overrides) {
    if (!py::isinstance<py::str>(item))
      throw Error("overrides: expected a dict of key: value or a list of \"key=value\" strings");
    out.push_back(item.cast<std::string>());
  }
  return out;
}

ExperimentConfig config_from(const py::object& config, const py::object& overrides) {
  const std::vector<std::string> sets = override_list(overrides);
  if (py::isinstance<py::dict>(config))
    return make_experiment(from_python(config), sets, "Experiment(dict)");
  if (py::isinstance<py::str>(config) || py::hasattr(config, "__fspath__"))
    return load_experiment(
        py::str(py::module_::import("os").attr("fspath")(config)).cast<std::string>(), sets);
  throw Error("Experiment: expected a dict, or the path of an experiment file");
}

// PyDTNN's launcher flags, as `dtnn run` takes them without an experiment file.
ExperimentConfig config_from_flags(const std::vector<std::string>& raw) {
  const std::vector<std::string> args = config::explicit_booleans(raw);
  std::vector<std::pair<std::string, std::string>> given;
  std::string model;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!a.starts_with("--")) throw Error("flags: '" + a + "': expected --flag or --flag=value");
    const auto eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const config::Flag* f = config::find_flag(name);
    if (!f) throw Error("flags: --" + name + ": not a launcher flag (dtnn run --help lists them)");
    std::string value;
    if (eq != std::string::npos)
      value = a.substr(eq + 1);
    else if (i + 1 < args.size())
      value = args[++i];
    else
      throw Error("flags: --" + name + ": expected a value");
    if (std::string(f->flag) == "model") model = value;
    given.emplace_back(f->flag, value);
  }
  if (model.empty()) throw Error("flags: give at least --model");
  const config::FlagSettings settings = config::flag_settings(given);
  if (!settings.error.empty()) throw Error(settings.error);
  if (const std::string note = config::pydtnn3_defaults_note(settings.sets); !note.empty())
    py::module_::import("warnings").attr("warn")("dtnn: " + note);
  return make_experiment(config::flag_run_base(model), settings.sets, "Experiment.from_flags");
}

py::dict eval_dict(const EvalResult& r) {
  py::dict d;
  d["loss"] = r.loss;
  for (const auto& [name, value] : r.metrics) d[py::str(name)] = value;
  d["samples"] = r.samples;
  return d;
}

class PyExperiment {
 public:
  explicit PyExperiment(const ExperimentConfig& config, std::shared_ptr<Dataset> data = nullptr)
      : experiment_(std::make_unique<Experiment>(config, registry(), std::move(data))) {}

  std::string summary() const { return experiment_->summary(); }

  py::object fit(const py::object& callbacks, const py::object& epochs) {
    if (!epochs.is_none()) {  // this many epochs from where training starts (resumed: after it)
      Trainer& t = experiment_->trainer();
      t.set_epochs(t.options().start.epoch + epochs.cast<std::int64_t>());
    }
    auto raised = std::make_shared<std::exception_ptr>();
    std::vector<std::shared_ptr<Scheduler>> adapters;
    if (!callbacks.is_none())
      for (const py::handle c : callbacks)
        adapters.push_back(
            std::make_shared<PythonCallback>(py::reinterpret_borrow<py::object>(c), raised));
    experiment_->trainer().set_callbacks(adapters);
    std::optional<History> h;
    try {
      py::gil_scoped_release release;
      h = experiment_->run();
    } catch (const Error&) {
      experiment_->trainer().set_callbacks({});
      if (*raised) std::rethrow_exception(*raised);  // the callback's own exception
      throw;
    }
    experiment_->trainer().set_callbacks({});
    {
      py::gil_scoped_release release;
      adapters.clear();
    }
    history_ = to_python(nlohmann::json::parse(h->to_json()));
    if (!h->stopped.empty()) history_["stopped"] = h->stopped;
    return history_;
  }

  py::dict evaluate(const std::string& split) {
    Trainer& t = experiment_->trainer();
    EvalResult r;
    {
      py::gil_scoped_release release;
      if (split == "test")
        r = t.evaluate(Split::test, 0, t.test_size());
      else if (split == "validation")
        r = t.evaluate(Split::train, t.train_size(), t.train_size() + t.validation_size());
      else if (split == "train")
        r = t.evaluate(Split::train, 0, t.train_size());
      else
        throw Error("evaluate: split '" + split +
                    "': expected \"test\", \"validation\" or \"train\"");
    }
    return eval_dict(r);
  }

  template <class T>
  py::array predict_as(const py::array& raw) {
    Model& model = experiment_->model();
    const auto x = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(raw);
    if (!x) throw Error("predict: expected an array of numbers");
    const Shape& sample = model.input_shape();
    bool fits = x.ndim() == sample.rank() + 1;
    for (int d = 0; fits && d < sample.rank(); ++d) fits = x.shape(d + 1) == sample[d];
    if (!fits) {
      std::string got = "(";
      for (py::ssize_t d = 0; d < x.ndim(); ++d)
        got += (d ? ", " : "") + std::to_string(x.shape(d));
      throw Error("predict: x has shape " + got + (x.ndim() == 1 ? ",)" : ")") +
                  ", the model takes (n, " + sample.str().substr(1) + " in " +
                  to_string(model.options().layout) + " order");
    }
    const std::int64_t n = x.shape(0), batch = model.options().max_batch;
    const Shape out = model.output_shape();
    std::vector<py::ssize_t> out_shape{static_cast<py::ssize_t>(n)};
    out_shape.insert(out_shape.end(), out.begin(), out.end());
    py::array_t<T> y(out_shape);
    const T* src = x.data();
    T* dst = y.mutable_data();
    {
      py::gil_scoped_release release;
      for (std::int64_t first = 0; first < n; first += batch) {
        const std::int64_t b = std::min(batch, n - first);
        Tensor in = Tensor::empty(sample.with_batch(b), dtype_of<T>(), model.options().layout);
        std::memcpy(in.raw(), src + first * sample.numel(), in.bytes());
        const Tensor& result = model.forward(in.to(model.options().device), Mode::eval);
        const Tensor host = result.to(Device::cpu);
        std::memcpy(dst + first * out.numel(), host.raw(), host.bytes());
      }
    }
    return y;
  }

  void compute_gradients(const py::object& x, const py::object& y) {
    if (experiment_->model().options().dtype == DType::float64)
      compute_gradients_as<double>(x, y);
    else
      compute_gradients_as<float>(x, y);
  }

  py::array predict(const py::array& x) {
    return experiment_->model().options().dtype == DType::float64 ? predict_as<double>(x)
                                                                  : predict_as<float>(x);
  }

  void save(const std::filesystem::path& file) {
    py::gil_scoped_release release;
    experiment_->save_checkpoint(file);
  }

  // The samples of x, one batch of the model's input (at most the run's batch), or an Error that
  // says what was expected.
  std::int64_t one_batch(const py::array& x, const std::string& what) {
    const Model& model = experiment_->model();
    const Shape& sample = model.input_shape();
    const std::int64_t n = x.ndim() > 0 ? x.shape(0) : 0;
    if (n < 1 || n > model.options().max_batch || x.size() != n * sample.numel())
      throw Error(what + ": x holds " + std::to_string(x.size()) + " values: expected (n, " +
                  sample.str().substr(1) +
                  " with 1 <= n <= " + std::to_string(model.options().max_batch) +
                  " (the run's batch), in " + to_string(model.options().layout) + " order");
    return n;
  }

  py::dict activations(const py::array& x) {
    return experiment_->model().options().dtype == DType::float64 ? activations_as<double>(x)
                                                                  : activations_as<float>(x);
  }

  // Every layer's output for the batch x in evaluation mode, "<i>.<type>" as the parameters' names
  // number the layers: each copied as soon as its layer has written it (a layer that runs in place
  // writes over its input's buffer after, so views would show later layers' values).
  template <class T>
  py::dict activations_as(const py::array& raw) {
    Model& model = experiment_->model();
    const auto x = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(raw);
    if (!x) throw Error("activations: expected an array of numbers");
    const Shape& sample = model.input_shape();
    const std::int64_t n = one_batch(x, "activations");
    auto kept = std::make_shared<std::vector<Tensor>>(model.num_layers());
    {
      py::gil_scoped_release release;
      Tensor in = Tensor::empty(sample.with_batch(n), dtype_of<T>(), model.options().layout);
      std::memcpy(in.raw(), x.data(), in.bytes());
      model.forward(in.to(model.options().device), Mode::eval, [&](std::size_t i) {
        const Tensor& out = model.layer_output(i);
        (*kept)[i] = Tensor::empty(out.shape(), out.dtype(), out.layout());
        (*kept)[i].copy_from(out);  // from the device, too
      });
    }
    // The arrays view the copies, which a capsule keeps alive as long as any of them.
    const py::capsule owner(new std::shared_ptr<std::vector<Tensor>>(kept), [](void* p) {
      delete static_cast<std::shared_ptr<std::vector<Tensor>>*>(p);
    });
    py::dict out;
    for (std::size_t i = 0; i < kept->size(); ++i)
      out[py::str(std::to_string(i + 1) + "." + model.layer(i).type())] =
          view_of((*kept)[i], owner);
    return out;
  }

  // The gradients of the loss for the batch (x, y), left in the parameters' gradients (no update).
  template <class T>
  void compute_gradients_as(const py::array& x_raw, const py::array& y_raw) {
    Model& model = experiment_->model();
    const auto x = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(x_raw);
    const auto y = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(y_raw);
    if (!x || !y) throw Error("gradients: expected arrays of numbers for x and y");
    const Shape& sample = model.input_shape();
    const std::int64_t n = one_batch(x, "gradients");
    const Shape out = model.output_shape();
    if (y.size() != n * out.numel())
      throw Error("gradients: y holds " + std::to_string(y.size()) +
                  " values: expected the targets of the model's output (n, " + out.str().substr(1) +
                  " (one-hot rows for a classifier)");
    py::gil_scoped_release release;
    Tensor xt = Tensor::empty(sample.with_batch(n), dtype_of<T>(), model.options().layout);
    Tensor yt = Tensor::empty(out.with_batch(n), dtype_of<T>());
    std::memcpy(xt.raw(), x.data(), xt.bytes());
    std::memcpy(yt.raw(), y.data(), yt.bytes());
    model.zero_grad();
    model.forward(xt.to(model.options().device), Mode::train);
    model.backward(experiment_->loss(), yt.to(model.options().device));
  }

  py::dict parameters(const py::object& self, bool gradients) {
    py::dict out;
    for (const Parameter& p : experiment_->model().parameters())
      out[py::str(p.name)] = view_of(gradients ? p.grad : p.value, self);
    return out;
  }

  py::list layers() const {
    py::list out;
    const Model& model = experiment_->model();
    for (std::size_t i = 0; i < model.num_layers(); ++i) {
      const Layer& l = model.layer(i);
      const auto [begin, end] = model.parameter_range(i);
      std::int64_t count = 0;
      for (std::size_t k = begin; k < end; ++k) count += model.parameters()[k].value.numel();
      py::dict d;
      d["index"] = i + 1;
      d["type"] = l.type();
      const Shape shape = l.output_shape();
      d["output_shape"] =
          py::tuple(py::cast(std::vector<std::int64_t>(shape.begin(), shape.end())));
      d["parameters"] = count;
      d["weights_shape"] = l.weights_shape();
      d["attributes"] = l.attributes();
      out.append(d);
    }
    return out;
  }

  void save_weights(const std::string& file) {
    py::gil_scoped_release release;
    if (std::filesystem::path(file).extension() == ".npz")
      save_pydtnn_weights(experiment_->model(), file);
    else
      write_file_atomically(file, encode_checkpoint(experiment_->model(), nullptr, {}));
  }

  void load_weights(const std::string& file) {
    py::gil_scoped_release release;
    if (std::filesystem::path(file).extension() == ".npz")
      load_pydtnn_weights(experiment_->model(), file);
    else
      load_checkpoint(file, experiment_->model());
  }

  py::object history() const { return history_.is_none() ? py::object(py::none()) : history_; }
  py::object config() const { return to_python(experiment_->config().json); }

  // {"name", "layout", "input_shape" (per sample, in the layout), "layers": [{"type", ...}]}.
  py::object model_spec() const {
    const Model& model = experiment_->model();
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerSpec& l : experiment_->model_spec().layers) {
      nlohmann::json entry = l.params.json();
      entry["type"] = l.type;
      layers.push_back(std::move(entry));
    }
    const Shape& input = model.input_shape();
    return to_python({{"name", experiment_->model_spec().name},
                      {"layout", to_string(model.options().layout)},
                      {"input_shape", std::vector<std::int64_t>(input.begin(), input.end())},
                      {"layers", std::move(layers)}});
  }
  std::int64_t parameter_count() const { return experiment_->model().parameter_count(); }
  double learning_rate() const { return experiment_->optimizer().learning_rate(); }

 private:
  std::unique_ptr<Experiment> experiment_;
  py::object history_ = py::none();
};

}  // namespace

void bind_experiment(py::module_& m) {
  py::class_<CallbackState>(m, "CallbackState",
                            "What a fit callback sees at an event; learning_rate and "
                            "stop_training may be set (stop: at the end of the epoch)")
      .def_readonly("epoch", &CallbackState::epoch, "the epoch, from 0")
      .def_readonly("batch", &CallbackState::batch, "the batch within the epoch, from 0")
      .def_readonly("rank", &CallbackState::rank)
      .def_readonly("ranks", &CallbackState::ranks)
      .def_readonly("logs", &CallbackState::logs,
                    "at on_epoch_end the epoch's loss and metrics (val_ ones too); at "
                    "on_batch_end batch_loss, this rank's loss of the batch")
      .def_readwrite("learning_rate", &CallbackState::learning_rate)
      .def_readwrite("stop_training", &CallbackState::stop_training);

  py::class_<PyExperiment>(m, "Experiment",
                           "An experiment: a model, a dataset, an optimizer and the rest, as "
                           "`dtnn run` makes them from an experiment file")
      .def(
          py::init([](const py::object& config, const py::object& overrides, const py::object& data,
                      const std::string& targets, std::int64_t classes, bool lazy) {
            return std::make_unique<PyExperiment>(
                config_from(config, overrides),
                data.is_none() ? nullptr : array_dataset(data, targets, classes, lazy));
          }),
          py::arg("config"), py::arg("overrides") = py::none(), py::kw_only(),
          py::arg("data") = py::none(), py::arg("targets") = "classes", py::arg("classes") = 0,
          py::arg("lazy") = false,
          "config: a dict, or the path of an experiment file (JSON); overrides: {key: value} "
          "(\"training.epochs\": 1) or [\"key=value\", ...], as dtnn run's --set. data: numpy "
          "arrays as the dataset, (x_train, y_train[, x_test, y_test]) or a dict of those names: "
          "x (N, H, W, C) or (N, F); y (N,) class ids or (N, K) one-hot rows, or with targets "
          "\"values\" the target values; or an object with __len__ and __getitem__ giving "
          "(x, y) pairs, read once ({\"train\": obj, \"test\": obj} for both splits), or "
          "with lazy=True batch by batch as dtnn trains (class-id labels then need classes); "
          "classes: the class count (0: the largest id + 1)")
      .def_static(
          "from_flags",
          [](const std::vector<std::string>& flags) {
            return std::make_unique<PyExperiment>(config_from_flags(flags));
          },
          py::arg("flags"),
          "An experiment from PyDTNN's launcher flags, as `dtnn run` takes them without an "
          "experiment file: [\"--model\", \"simplecnn\", \"--dataset\", \"mnist\", ...]")
      .def("summary", &PyExperiment::summary, "the model table and every parameter, as text")
      .def("fit", &PyExperiment::fit, py::arg("callbacks") = py::none(),
           py::arg("epochs") = py::none(),
           "Trains as `dtnn run` does (the epochs of training.epochs, or `epochs` of them; "
           "evaluation, output files) and returns the history as a dict. callbacks: objects with "
           "any of on_train_begin, "
           "on_epoch_begin, on_batch_end, on_epoch_end, on_train_end (or plain callables, called "
           "at each epoch's end), each called with a CallbackState")
      .def("evaluate", &PyExperiment::evaluate, py::arg("split") = "test",
           "the loss and metrics over a split: \"test\", \"validation\" or \"train\"")
      .def("predict", &PyExperiment::predict, py::arg("x"),
           "the model's outputs for x: (n, sample...) in the model's layout (NHWC unless "
           "training.tensor_format says otherwise), in batches of at most the run's batch")
      .def(
          "parameters",
          [](py::object self) { return self.cast<PyExperiment&>().parameters(self, false); },
          "every parameter as a numpy array over dtnn's memory (no copy; writable)")
      .def(
          "gradients",
          [](py::object self, const py::object& x, const py::object& y) {
            PyExperiment& e = self.cast<PyExperiment&>();
            if (!x.is_none() || !y.is_none()) {
              if (x.is_none() || y.is_none())
                throw Error("gradients: give both x and y, or neither");
              e.compute_gradients(x, y);
            }
            return e.parameters(self, true);
          },
          py::arg("x") = py::none(), py::arg("y") = py::none(),
          "every parameter's gradient, as numpy arrays over dtnn's memory. With a batch x and its "
          "targets y (one-hot rows for a classifier), the gradients of the loss for that batch "
          "(forward in training mode and backward; the weights do not change). Without, the "
          "accumulators as they are (a training step consumes them: zero after fit)")
      .def(
          "save", [](PyExperiment& e, const std::filesystem::path& file) { e.save(file); },
          py::arg("file"),
          "a checkpoint of the experiment as it is (weights, layer and optimizer state, where the "
          "last fit ended): Experiment(config, {\"training.resume\": file}) goes on from it as "
          "`dtnn run --resume` does")
      .def("activations", &PyExperiment::activations, py::arg("x"),
           "every layer's output for the batch x (n <= the run's batch; the model's layout) in "
           "evaluation mode, as a dict of numpy arrays named '<i>.<type>' as the parameters number "
           "the layers: copies taken as each layer wrote its output")
      .def_property_readonly("layers", &PyExperiment::layers,
                             "the model table as data: index, type, output shape, parameters")
      .def_property_readonly("parameter_count", &PyExperiment::parameter_count)
      .def_property_readonly("learning_rate", &PyExperiment::learning_rate)
      .def_property_readonly("history", &PyExperiment::history, "the last fit's history (dict)")
      .def_property_readonly("model_spec", &PyExperiment::model_spec,
                             "the model's architecture as its file gives it (sizes substituted): "
                             "name, layout, input_shape per sample, layers (each a dict: type "
                             "and the parameters the file sets)")
      .def_property_readonly("config", &PyExperiment::config,
                             "the experiment as it runs: every key, with its default")
      .def("save_weights", &PyExperiment::save_weights, py::arg("file"),
           "the weights to file: PyDTNN's .npz, or else a dtnn checkpoint (weights only)")
      .def("load_weights", &PyExperiment::load_weights, py::arg("file"),
           "weights from PyDTNN's .npz or a dtnn checkpoint, checked against the model");
}

}  // namespace dtnn::python
