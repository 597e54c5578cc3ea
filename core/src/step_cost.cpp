#include "dtnn/step_cost.hpp"

#include <numeric>

#include "dtnn/error.hpp"
#include "dtnn/layer_trace.hpp"
#include "dtnn/model.hpp"
#include "dtnn/trace.hpp"
#include "dtnn/trainer.hpp"

namespace dtnn {

using nlohmann::json;

namespace {

// Runs `steps` training steps on consecutive batches, the next one named as in training.
void train_steps(Experiment& e, int steps) {
  Trainer& trainer = e.trainer();
  const std::int64_t batch = trainer.global_batch();
  const std::int64_t n = trainer.train_size();
  if (n < batch)
    throw Error("dtnn predict: the training split holds " + std::to_string(n) +
                " samples, fewer than a batch of " + std::to_string(batch));
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto at = [&](std::int64_t i) {
    const std::int64_t first = (i * batch) % (n - batch + 1);
    return std::span<const std::int64_t>(order).subspan(static_cast<std::size_t>(first),
                                                        static_cast<std::size_t>(batch));
  };
  static std::int64_t step = 0;  // the batches go on where the last call left them
  for (int s = 0; s < steps; ++s, ++step) trainer.train_step(at(step), 1.0, false, at(step + 1));
}

// The model's layers, their numbers in the trace, and their parameters' bytes.
StepCost layers_of(Experiment& e) {
  Model& model = e.model();
  StepCost cost;
  cost.batch = e.trainer().global_batch();
  for (std::size_t i = 0; i < model.num_layers(); ++i) {
    LayerCost l;
    const auto [begin, end] = model.parameter_range(i);
    for (std::size_t p = begin; p < end; ++p)
      l.parameter_bytes += model.parameters()[p].value.bytes();
    cost.layers.push_back(l);
  }
  return cost;
}

// The optimizer's time per step, shared among the layers by their parameters' bytes.
void share_optimizer(StepCost& cost, double optimizer_s) {
  double bytes = 0;
  for (const LayerCost& l : cost.layers) bytes += l.parameter_bytes;
  for (LayerCost& l : cost.layers)
    l.optimizer_s = bytes > 0 ? optimizer_s * l.parameter_bytes / bytes : 0.0;
}

}  // namespace

StepCost measure_step_cost(Experiment& e, int warmup, int steps) {
  train_steps(e, warmup);
  trace::start({true, std::size_t{1} << 24});
  train_steps(e, steps);
  trace::stop();
  const trace::Recorded r = trace::collect();
  StepCost cost = layers_of(e);
  std::map<int, std::size_t> index;  // trace number -> the model's layer
  for (std::size_t i = 0; i < e.model().num_layers(); ++i)
    if (!e.model().layer(i).is_reshape())  // a reshape runs nothing: no span, no number
      index[layer_trace::number(e.model().layer(i))] = i;
  for (const trace::Event& ev : r.events) {
    if (ev.phase != trace::Phase::forward && ev.phase != trace::Phase::backward) continue;
    const json args = json::parse(r.labels[ev.label].args, nullptr, false);
    if (!args.is_object() || !args.contains("layer")) continue;
    const auto it = index.find(args["layer"].get<int>());
    if (it == index.end()) continue;  // a layer inside a block: its block's span holds it
    LayerCost& l = cost.layers[it->second];
    (ev.phase == trace::Phase::forward ? l.forward_s : l.backward_s) +=
        static_cast<double>(ev.end_ns - ev.begin_ns) * 1e-9 / steps;
  }
  auto per_step = [&](trace::Phase p) { return r.seconds[static_cast<std::size_t>(p)] / steps; };
  cost.data_s = per_step(trace::Phase::data);
  cost.loss_s = per_step(trace::Phase::loss);
  share_optimizer(cost, per_step(trace::Phase::optimizer));
  return cost;
}

StepCost step_cost_from_profile(Experiment& e, const json& profile, const std::string& where) {
  if (!profile.is_object() || !profile.contains("layers") || !profile.contains("batch_size"))
    throw Error(where +
                ": expected a history with a \"profile\" (dtnn run --profile --history "
                "FILE.json), or its profile object");
  trace::start({true, std::size_t{1} << 20});  // numbers the layers
  train_steps(e, 1);
  trace::stop();
  StepCost cost = layers_of(e);
  cost.batch = profile["batch_size"].get<std::int64_t>();
  std::map<int, const json*> rows;
  for (const json& row : profile["layers"]) rows[row.at("layer").get<int>()] = &row;
  for (std::size_t i = 0; i < e.model().num_layers(); ++i) {
    if (e.model().layer(i).is_reshape()) continue;  // runs nothing
    const int number = layer_trace::number(e.model().layer(i));
    const auto it = rows.find(number);
    if (it == rows.end()) continue;  // a layer that costs nothing (flatten)
    const json& row = *it->second;
    if (row.at("type").get<std::string>() != e.model().layer(i).type())
      throw Error(where + ": profile row " + std::to_string(number) + " is a " +
                  row.at("type").get<std::string>() + ", this experiment's layer " +
                  std::to_string(i + 1) + " a " + e.model().layer(i).type() +
                  ": the profile is of another model");
    cost.layers[i].forward_s = row.at("forward_ms").get<double>() * 1e-3;
    cost.layers[i].backward_s = row.at("backward_ms").get<double>() * 1e-3;
  }
  cost.data_s = profile.at("data_wait_ms").get<double>() * 1e-3;
  cost.loss_s = profile.at("loss_ms").get<double>() * 1e-3;
  share_optimizer(cost, profile.at("optimizer_ms").get<double>() * 1e-3);
  return cost;
}

}  // namespace dtnn
