// Plugins written in Python (docs/plugin-authoring.md, "Plugins in Python"): dtnn.register(cls)
// adds a class as a plugin of its kind to the registry the module's experiments use, beside the
// shared objects; an experiment then names it like any other. Seven kinds:
//
//   "conv"       a ConvAlgorithm: forward(x, w, y), backward_data(dy, w, dx),
//                backward_filter(x, dy, dw) on numpy views of dtnn's tensors (x, w, dy read-only);
//                each writes its output (a returned array is copied in; backward_filter's is
//                added to dw, whose contract is to accumulate). Optional: prepare(g), supports(g,
//                pass) -> True or the reason it does not. g: the geometry as attributes.
//   "layer"      build(ctx) -> the output's per-sample shape (None: the input's); ctx has
//                input_shape, layout, dtype, max_batch, seed and parameter(name, shape) -> (value,
//                grad), views of tensors dtnn owns (the optimizer updates them, checkpoints keep
//                them). forward(x, y, training), backward(x, y, dy, dx) (dx None when not needed):
//                writes y and dx (or returns them) and ADDS to its parameters' grads.
//   "optimizer"  build(parameters, ctx): parameters a list of (name, value, grad); ctx.state(shape)
//                -> a zeroed array dtnn owns and checkpoints. update(index, value, grad): updates
//                value in place (the grad is zeroed after it); a learning_rate attribute.
//                Optional: begin_step().
//   "loss"       forward(y_pred, y_true) -> the batch's mean loss; backward(y_pred, y_true, dy)
//                writes dLoss/dy_pred (or returns it).
//   "metric"     totals (an int, or a method giving it); accumulate(y_pred, y_true) -> the batch's
//                contribution to each total (they are summed over batches and ranks);
//                value(totals) -> the metric. Optional: set_classes(classes).
//   "scheduler"  on_train_begin, on_epoch_begin, on_batch_begin, on_batch_end, on_epoch_end,
//                on_train_end (those it has) with s: epoch, batch, rank, ranks, logs (the epoch's
//                losses and metrics), learning_rate and stop_training, the last two its to change.
//                Optional: state() -> list of floats and set_state(values), for checkpoints.
//   "dataset"    sample_shape (H, W, C or features), classes, size(split) -> samples of "train" or
//                "test"; read(split, indices, x, y) writes sample indices[i] into x[i] (in the
//                layout x's shape shows: (n, C, H, W) for NCHW images) and its one-hot label into
//                y[i]. Called from the batch loader's thread too (with the GIL).
//
// The class is constructed with the plugin's parameters as keywords (its `parameters` attribute
// gives them and their defaults, checked like a shared object's). Every call into Python takes the
// GIL (the module's long calls release it), and a Python exception becomes a dtnn Error that names
// the plugin and carries the traceback: the run stops as for any plugin's error.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/scheduler.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "module_support.hpp"

namespace py = pybind11;

namespace dtnn::python {

namespace {

// The Error a Python exception becomes: who raised it, then Python's traceback.
[[noreturn]] void raise_from_python(const std::string& who, py::error_already_set& e) {
  std::string trace;
  try {
    const py::list lines =
        py::module_::import("traceback").attr("format_exception")(e.type(), e.value(), e.trace());
    for (const py::handle line : lines) trace += py::str(line).cast<std::string>();
  } catch (...) {
    trace = e.what();
  }
  while (!trace.empty() && trace.back() == '\n') trace.pop_back();
  throw Error(who + " (Python) raised:\n" + trace);
}

// A view of t for Python, holding its storage; read-only unless writable.
py::array view(const Tensor& t, bool writable) {
  py::capsule owner(new Tensor(t), [](void* p) { delete static_cast<Tensor*>(p); });
  py::array a = view_of(t, owner);
  if (!writable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

// out[...] = value (a returned array copied into dtnn's tensor), or out += value.
void store(const py::array& out, const py::handle& value, bool add, const std::string& who) {
  if (value.is_none()) return;
  py::object target = py::module_::import("numpy").attr("asarray")(value);
  if (!target.attr("shape").equal(out.attr("shape")))
    throw Error(who + " returned an array of shape " +
                py::str(target.attr("shape")).cast<std::string>() + ", expected " +
                py::str(out.attr("shape")).cast<std::string>());
  if (add)
    out.attr("__iadd__")(target);
  else
    out.attr("__setitem__")(py::ellipsis(), target);
}

// A shape from Python: 1 to Shape::kMaxRank positive sizes.
Shape checked_shape(const std::vector<std::int64_t>& dims, const std::string& what) {
  if (dims.empty() || dims.size() > static_cast<std::size_t>(Shape::kMaxRank) ||
      std::any_of(dims.begin(), dims.end(), [](std::int64_t v) { return v < 1; }))
    throw Error(what + ": expected 1 to " + std::to_string(Shape::kMaxRank) + " positive sizes");
  return Shape::from(dims.begin(), dims.end());
}

const char* layout_name(Layout l) { return l == Layout::nhwc ? "nhwc" : "nchw"; }
const char* dtype_name(DType d) { return d == DType::float64 ? "float64" : "float32"; }

py::object namespace_of(const py::dict& fields) {
  return py::module_::import("types").attr("SimpleNamespace")(**fields);
}

// The object a plugin wraps, released with the GIL held (the plugin may die on any thread).
class PythonObject {
 public:
  PythonObject(py::object o, std::string who) : object_(std::move(o)), who_(std::move(who)) {}
  ~PythonObject() {
    if (!Py_IsInitialized()) {
      object_.release();  // the interpreter is gone: nothing to give back
      return;
    }
    py::gil_scoped_acquire gil;
    object_ = py::object();
  }
  PythonObject(const PythonObject&) = delete;
  PythonObject& operator=(const PythonObject&) = delete;

  const std::string& who() const { return who_; }
  bool has(const char* method) const {
    py::gil_scoped_acquire gil;
    return py::hasattr(object_, method);
  }
  // f(object) with the GIL; a Python exception becomes an Error naming the plugin and the method.
  template <class F>
  auto call(const char* method, F&& f) const {
    py::gil_scoped_acquire gil;
    try {
      return f(object_);
    } catch (py::error_already_set& e) {
      raise_from_python(who_ + "." + method, e);
    }
  }
  // method(inputs (read-only)..., out): what it writes into out, or returns (copied in, or added
  // when add).
  template <class... Inputs>
  void into(const char* method, Tensor& out, bool add, const Inputs&... inputs) const {
    call(method, [&](const py::object& o) {
      const py::array target = view(out, true);
      store(target, o.attr(method)(view(inputs, false)..., target), add, who_);
    });
  }

 private:
  py::object object_;
  std::string who_;
};

// Drops the arrays a plugin handed to Python, with the GIL (a plugin may die on any thread; after
// the interpreter has gone there is nothing to give back).
void release(std::vector<std::pair<py::array, py::array>>& views) {
  if (!Py_IsInitialized()) {
    for (auto& [a, b] : views) a.release(), b.release();
    return;
  }
  py::gil_scoped_acquire gil;
  views.clear();
}

class PythonConv final : public ConvAlgorithm {
 public:
  PythonConv(std::string name, py::object object)
      : name_(std::move(name)), object_(std::move(object), "conv plugin '" + name_ + "'") {}

  std::string name() const override { return name_; }
  bool supports(const ConvGeometry& g, ConvPass pass, std::string& why_not) const override {
    if (!object_.has("supports")) return true;
    static const char* const kPasses[] = {"forward", "backward_data", "backward_filter"};
    return object_.call("supports", [&](const py::object& o) {
      const py::object answer = o.attr("supports")(geometry(g), kPasses[int(pass)]);
      if (py::isinstance<py::bool_>(answer) && answer.cast<bool>()) return true;
      why_not = py::isinstance<py::str>(answer) ? answer.cast<std::string>()
                                                : std::string("declined by ") + name_;
      return false;
    });
  }
  void prepare(const ConvGeometry& g) override {
    if (object_.has("prepare"))
      object_.call("prepare", [&](const py::object& o) { o.attr("prepare")(geometry(g)); });
  }
  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    object_.into("forward", y, false, x, w);
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    object_.into("backward_data", dx, false, dy, w);
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    object_.into("backward_filter", dw, true, x, dy);  // added: dw accumulates
  }

 private:
  static py::object geometry(const ConvGeometry& g) {
    py::dict d;
    d["n"] = g.n, d["h"] = g.h, d["w"] = g.w, d["c"] = g.c, d["k"] = g.k;
    d["kh"] = g.kh, d["kw"] = g.kw, d["ho"] = g.ho(), d["wo"] = g.wo();
    d["stride"] = py::make_tuple(g.stride_h, g.stride_w);
    d["padding"] = py::make_tuple(g.pad_h, g.pad_w);
    d["dilation"] = py::make_tuple(g.dilation_h, g.dilation_w);
    d["layout"] = layout_name(g.layout);
    d["dtype"] = dtype_name(g.dtype);
    return namespace_of(d);
  }

  std::string name_;
  PythonObject object_;
};

class PythonLayer final : public Layer {
 public:
  PythonLayer(std::string name, py::object object)
      : name_(std::move(name)), object_(std::move(object), "layer plugin '" + name_ + "'") {}

  ~PythonLayer() override { release(views_); }
  std::string type() const override { return name_; }
  Shape output_shape() const override { return output_; }
  std::vector<Parameter> parameters() override { return parameters_; }

  void build(const LayerBuildContext& ctx) override {
    if (ctx.device != Device::cpu) throw Error(object_.who() + " (Python) runs on the cpu only");
    parameters_.clear();
    views_.clear();
    object_.call("build", [&](const py::object& o) {
      py::dict d;
      d["input_shape"] = py::tuple(
          py::cast(std::vector<std::int64_t>(ctx.input_shape.begin(), ctx.input_shape.end())));
      d["layout"] = layout_name(ctx.layout);
      d["dtype"] = dtype_name(ctx.dtype);
      d["max_batch"] = ctx.max_batch;
      d["seed"] = ctx.seed;
      const DType dtype = ctx.dtype;
      d["parameter"] = py::cpp_function(
          [this, dtype](const std::string& name, const std::vector<std::int64_t>& shape) {
            const Shape s = checked_shape(shape, object_.who() + ": parameter '" + name + "'");
            Parameter p{name, Tensor::zeros(s, dtype), Tensor::zeros(s, dtype)};
            parameters_.push_back(p);
            views_.push_back({view(p.value, true), view(p.grad, true)});
            return py::make_tuple(views_.back().first, views_.back().second);
          });
      const py::object out = o.attr("build")(namespace_of(d));
      if (out.is_none()) {
        output_ = ctx.input_shape;
      } else {
        const auto dims = out.cast<std::vector<std::int64_t>>();
        if (dims.empty() || std::any_of(dims.begin(), dims.end(), [](auto v) { return v < 1; }))
          throw Error(object_.who() + ".build returned the output shape " +
                      py::str(out).cast<std::string>() + "; expected positive sizes");
        output_ = Shape::from(dims.begin(), dims.end());
      }
    });
  }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    object_.call("forward", [&](const py::object& o) {
      const py::array out = view(y, true);
      store(out, o.attr("forward")(view(x, false), out, mode == Mode::train), false, object_.who());
    });
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    object_.call("backward", [&](const py::object& o) {
      const py::object out = dx ? py::object(view(*dx, true)) : py::none();
      const py::object r = o.attr("backward")(view(x, false), view(y, false), view(dy, false), out);
      if (dx) store(out, r, false, object_.who());
    });
  }

 private:
  std::string name_;
  PythonObject object_;
  Shape output_;
  std::vector<Parameter> parameters_;
  std::vector<std::pair<py::array, py::array>> views_;  // what build handed out (kept alive)
};

class PythonOptimizer final : public Optimizer {
 public:
  PythonOptimizer(std::string name, py::object object)
      : name_(std::move(name)), object_(std::move(object), "optimizer plugin '" + name_ + "'") {}

  ~PythonOptimizer() override { release(views_); }
  void build(std::span<const Parameter> parameters) override {
    state_.clear();
    object_.call("build", [&](const py::object& o) {
      py::list list;
      views_.clear();
      for (const Parameter& p : parameters) {
        views_.push_back({view(p.value, true), view(p.grad, true)});
        list.append(py::make_tuple(p.name, views_.back().first, views_.back().second));
      }
      const DType dtype = parameters.empty() ? DType::float32 : parameters[0].value.dtype();
      py::dict d;
      d["state"] = py::cpp_function([this, dtype](const std::vector<std::int64_t>& shape) {
        state_.push_back(Tensor::zeros(checked_shape(shape, object_.who() + ": state"), dtype));
        return view(state_.back(), true);
      });
      o.attr("build")(list, namespace_of(d));
    });
  }
  void begin_step() override {
    if (has_begin_step_ < 0) has_begin_step_ = object_.has("begin_step") ? 1 : 0;
    if (has_begin_step_)
      object_.call("begin_step", [](const py::object& o) { o.attr("begin_step")(); });
  }
  void update(std::size_t index, const Parameter& parameter) override {
    object_.call("update", [&](const py::object& o) {
      const auto& [value, grad] = views_.at(index);
      o.attr("update")(index, value, grad);
    });
    Tensor grad = parameter.grad;
    std::memset(grad.raw(), 0, grad.bytes());
  }
  double learning_rate() const override {
    return object_.call("learning_rate",
                        [](const py::object& o) { return o.attr("learning_rate").cast<double>(); });
  }
  void set_learning_rate(double lr) override {
    object_.call("learning_rate", [&](const py::object& o) { o.attr("learning_rate") = lr; });
  }
  std::vector<Tensor> state() override { return state_; }

 private:
  std::string name_;
  PythonObject object_;
  int has_begin_step_ = -1;
  std::vector<std::pair<py::array, py::array>> views_;
  std::vector<Tensor> state_;
};

class PythonLoss final : public Loss {
 public:
  PythonLoss(std::string name, py::object object)
      : name_(std::move(name)), object_(std::move(object), "loss plugin '" + name_ + "'") {}
  std::string name() const override { return name_; }
  double forward(const Tensor& y_pred, const Tensor& y_true) override {
    return object_.call("forward", [&](const py::object& o) {
      return o.attr("forward")(view(y_pred, false), view(y_true, false)).cast<double>();
    });
  }
  void backward(const Tensor& y_pred, const Tensor& y_true, Tensor& dy) override {
    object_.into("backward", dy, false, y_pred, y_true);
  }

 private:
  std::string name_;
  PythonObject object_;
};

class PythonMetric final : public Metric {
 public:
  PythonMetric(std::string name, py::object object)
      : name_(std::move(name)), object_(std::move(object), "metric plugin '" + name_ + "'") {}
  std::string name() const override { return name_; }
  void set_classes(std::int64_t classes) override {
    if (object_.has("set_classes"))
      object_.call("set_classes", [&](const py::object& o) { o.attr("set_classes")(classes); });
  }
  std::size_t num_totals() const override {
    return object_.call("totals", [](const py::object& o) {
      const py::object n = o.attr("totals");
      return (PyCallable_Check(n.ptr()) ? n() : n).cast<std::size_t>();
    });
  }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    object_.call("accumulate", [&](const py::object& o) {
      const auto add = o.attr("accumulate")(view(y_pred, false), view(y_true, false))
                           .cast<std::vector<double>>();
      if (add.size() != totals.size())
        throw Error(object_.who() + ".accumulate returned " + std::to_string(add.size()) +
                    " totals, expected " + std::to_string(totals.size()));
      for (std::size_t i = 0; i < add.size(); ++i) totals[i] += add[i];
    });
  }
  double value(std::span<const double> totals) const override {
    return object_.call("value", [&](const py::object& o) {
      return o.attr("value")(std::vector<double>(totals.begin(), totals.end())).cast<double>();
    });
  }

 private:
  std::string name_;
  PythonObject object_;
};

class PythonScheduler final : public Scheduler {
 public:
  PythonScheduler(std::string name, py::object object)
      : name_(std::move(name)), object_(std::move(object), "scheduler plugin '" + name_ + "'") {}
  std::string name() const override { return name_; }
  void on_train_begin(TrainingState& s) override { event("on_train_begin", s); }
  void on_epoch_begin(TrainingState& s) override { event("on_epoch_begin", s); }
  void on_batch_begin(TrainingState& s) override { event("on_batch_begin", s); }
  void on_batch_end(TrainingState& s) override { event("on_batch_end", s); }
  void on_epoch_end(TrainingState& s) override { event("on_epoch_end", s); }
  void on_train_end(TrainingState& s) override { event("on_train_end", s); }
  std::vector<double> state() const override {
    if (!object_.has("state")) return {};
    return object_.call(
        "state", [](const py::object& o) { return o.attr("state")().cast<std::vector<double>>(); });
  }
  void set_state(std::span<const double> values) override {
    if (object_.has("set_state"))
      object_.call("set_state", [&](const py::object& o) {
        o.attr("set_state")(std::vector<double>(values.begin(), values.end()));
      });
  }

 private:
  // The event's method, if the object has it, on s (epoch, batch, rank, ranks, logs,
  // learning_rate, stop_training); what it sets of the last two is applied.
  void event(const char* method, TrainingState& s) {
    auto known = std::find_if(has_.begin(), has_.end(), [&](auto& e) { return e.first == method; });
    if (known == has_.end()) known = has_.insert(has_.end(), {method, object_.has(method)});
    if (!known->second) return;
    object_.call(method, [&](const py::object& o) {
      py::dict d;
      d["epoch"] = s.epoch, d["batch"] = s.batch, d["rank"] = s.rank, d["ranks"] = s.ranks;
      d["logs"] = py::cast(s.logs);
      const double lr = s.optimizer ? s.optimizer->learning_rate() : 0.0;
      d["learning_rate"] = lr;
      d["stop_training"] = s.stop_training;
      const py::object state = namespace_of(d);
      o.attr(method)(state);
      const double wanted = state.attr("learning_rate").cast<double>();
      if (s.optimizer && wanted != lr) {
        if (!(wanted > 0) || !std::isfinite(wanted))
          throw Error(object_.who() + "." + method + " set the learning rate to " +
                      std::to_string(wanted) + "; expected a finite number > 0");
        s.optimizer->set_learning_rate(wanted);
      }
      s.stop_training = state.attr("stop_training").cast<bool>();
    });
  }

  std::string name_;
  PythonObject object_;
  std::vector<std::pair<std::string, bool>> has_;
};

class PythonDataset final : public Dataset {
 public:
  PythonDataset(std::string name, py::object object)
      : name_(std::move(name)), object_(std::move(object), "dataset plugin '" + name_ + "'") {
    object_.call("sample_shape", [&](const py::object& o) {
      const auto dims = o.attr("sample_shape").cast<std::vector<std::int64_t>>();
      shape_ = checked_shape(dims, object_.who() + ": sample_shape");
      classes_ = o.attr("classes").cast<std::int64_t>();
      if (classes_ < 1) throw Error(object_.who() + ": classes must be >= 1");
      for (const Split s : {Split::train, Split::test}) {
        const std::int64_t n = o.attr("size")(split_name(s)).cast<std::int64_t>();
        if (n < 0) throw Error(object_.who() + ".size: negative");
        sizes_[static_cast<int>(s)] = n;
      }
    });
  }
  Shape sample_shape(Layout layout) const override {
    if (layout == Layout::nchw && shape_.rank() == 3) return Shape{shape_[2], shape_[0], shape_[1]};
    return shape_;
  }
  std::int64_t num_classes() const override { return classes_; }
  std::int64_t size(Split split) const override { return sizes_[static_cast<int>(split)]; }
  void read(Split split, std::span<const std::int64_t> indices, Tensor& x,
            Tensor& y) const override {
    object_.call("read", [&](const py::object& o) {
      const py::array ids(py::dtype::of<std::int64_t>(), {static_cast<py::ssize_t>(indices.size())},
                          indices.data());  // a copy: the span is the caller's
      const auto n = static_cast<std::int64_t>(indices.size());
      o.attr("read")(split_name(split), ids, view(x.slice_batch(0, n), true),
                     view(y.slice_batch(0, n), true));
    });
  }

 private:
  static const char* split_name(Split s) { return s == Split::train ? "train" : "test"; }

  std::string name_;
  PythonObject object_;
  Shape shape_;
  std::int64_t classes_ = 0;
  std::int64_t sizes_[2] = {0, 0};
};

const char* const kKinds[] = {"conv",   "layer",     "optimizer", "loss",
                              "metric", "scheduler", "dataset"};

// dtnn.register(cls, kind=None, name=None): cls's plugin record in the module's registry.
std::string register_class(const py::object& cls, std::string kind, std::string name) {
  if (kind.empty() && py::hasattr(cls, "kind")) kind = py::str(cls.attr("kind"));
  if (name.empty() && py::hasattr(cls, "name")) name = py::str(cls.attr("name"));
  const std::string where =
      "dtnn.register(" + py::str(cls.attr("__name__")).cast<std::string>() + ")";
  if (std::find(std::begin(kKinds), std::end(kKinds), kind) == std::end(kKinds))
    throw Error(where + ": kind '" + kind +
                "'; Python plugins are of kind conv, layer, optimizer, loss, metric, scheduler or "
                "dataset");
  if (name.empty()) throw Error(where + ": give the plugin a name (a `name` attribute or name=)");
  PluginRecord r;
  r.kind = kind;
  r.name = name;
  const py::object doc = cls.attr("__doc__");
  r.description = doc.is_none() ? "(Python)" : py::str(doc).cast<std::string>();
  r.description = r.description.substr(0, r.description.find('\n')) + " (Python)";
  r.parameters = py::hasattr(cls, "parameters") ? from_python(cls.attr("parameters")).dump() : "{}";
  nlohmann::json traits =
      py::hasattr(cls, "traits") ? from_python(cls.attr("traits")) : nlohmann::json::object();
  if (!traits.is_object()) throw Error(where + ": `traits` must be a dict");
  r.traits_json = traits.dump();
  const py::object module = py::module_::import("inspect").attr("getmodule")(cls);
  r.file =
      !module.is_none() && py::hasattr(module, "__file__") && !module.attr("__file__").is_none()
          ? py::str(module.attr("__file__")).cast<std::string>()
          : std::string("<python>");
  // The class lives as long as the process: a reference taken here is never given back (the
  // registry may outlive the interpreter).
  PyObject* held = cls.ptr();
  Py_INCREF(held);
  r.make = [held, kind, name](const Params& p, const PluginContext&) -> Plugin* {
    py::gil_scoped_acquire gil;
    py::object object;
    try {
      object = py::reinterpret_borrow<py::object>(held)(**py::dict(to_python(p.json())));
    } catch (py::error_already_set& e) {
      raise_from_python(kind + " plugin '" + name + "' (constructing it)", e);
    }
    if (kind == "conv") return new PythonConv(name, std::move(object));
    if (kind == "layer") return new PythonLayer(name, std::move(object));
    if (kind == "loss") return new PythonLoss(name, std::move(object));
    if (kind == "metric") return new PythonMetric(name, std::move(object));
    if (kind == "scheduler") return new PythonScheduler(name, std::move(object));
    if (kind == "dataset") return new PythonDataset(name, std::move(object));
    return new PythonOptimizer(name, std::move(object));
  };
  registry().add(std::move(r));
  return name;
}

// dtnn.check_plugin(kind, name): the conformance checks of `dtnn check-plugin` as dicts.
py::list check(const std::string& kind, const std::string& name, const py::object& cases) {
  const PluginRecord* record = registry().find(kind, name);
  if (!record) registry().require(kind, name, "dtnn.check_plugin");
  std::vector<testing::Check> checks;
  {
    const std::string given = cases.is_none() ? "" : from_python(cases).dump();
    py::gil_scoped_release release;  // the plugin's calls take it back, on whatever thread
    checks = given.empty() ? testing::check_plugin(registry(), *record)
                           : testing::check_plugin(registry(), *record, given);
  }
  py::list out;
  for (const testing::Check& c : checks) {
    py::dict d;
    d["what"] = c.what;
    d["setting"] = c.setting;
    d["supported"] = c.supported;
    d["passed"] = c.passed;
    d["detail"] = c.detail;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_plugins(py::module_& m) {
  m.def(
      "register", &register_class, py::arg("cls"), py::arg("kind") = "", py::arg("name") = "",
      "Adds a Python class as a plugin of its kind (`kind` and `name` attributes, or these "
      "arguments): conv, layer, optimizer, loss, metric, scheduler or dataset. Experiments created "
      "afterwards may name it. Returns "
      "the name. See docs/plugin-authoring.md, \"Plugins in Python\".");
  m.def("check_plugin", &check, py::arg("kind"), py::arg("name"), py::arg("cases") = py::none(),
        "The conformance checks `dtnn check-plugin` runs, for a plugin of the registry (one "
        "registered from Python too): a list of dicts (what, setting, supported, passed, "
        "detail). `cases`: the kind's cases to check it at instead of its own.");
}

}  // namespace dtnn::python
