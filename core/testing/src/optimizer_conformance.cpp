// The optimizer driver of plugin_conformance.hpp.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "dtnn/optimizer.hpp"
#include "dtnn/testing/guarded.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

using nlohmann::json;

namespace {

// Two parameters of different shapes, weights and gradients from seed.
std::vector<Parameter> parameters(DType dtype, std::uint64_t seed) {
  std::vector<Parameter> ps;
  for (const Shape& s : {Shape{3, 4}, Shape{5}}) {
    Parameter p{"p" + std::to_string(ps.size()), Tensor::empty(s, dtype), Tensor::empty(s, dtype)};
    fill_uniform(p.value, seed + ps.size());
    fill_uniform(p.grad, seed + 100 + ps.size());
    ps.push_back(std::move(p));
  }
  return ps;
}

void new_gradients(std::vector<Parameter>& ps, std::uint64_t seed) {
  for (std::size_t k = 0; k < ps.size(); ++k) fill_uniform(ps[k].grad, seed + k);
}

bool same_bits(const std::vector<Parameter>& a, const std::vector<Parameter>& b) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::memcmp(a[k].value.raw(), b[k].value.raw(), a[k].value.bytes()) != 0) return false;
  return true;
}

using Make = std::function<std::shared_ptr<Optimizer>()>;

// From zero weights and zero state, one step moves each weight against its gradient (or not at
// all), and leaves the gradient zero.
void first_step(const Make& make, DType dtype, std::vector<std::pair<std::string, bool>>& out) {
  auto opt = make();
  std::vector<Parameter> ps = parameters(dtype, 1);
  for (Parameter& p : ps) p.value.fill_zero();
  opt->build(ps);
  std::vector<Tensor> g;
  for (const Parameter& p : ps) {
    g.push_back(Tensor::empty(p.grad.shape(), dtype));
    g.back().copy_from(p.grad);
  }
  opt->step(ps);
  bool consumed = true, descends = true, moved = false;
  for (std::size_t k = 0; k < ps.size(); ++k)
    for (std::int64_t i = 0; i < ps[k].value.numel(); ++i) {
      consumed = consumed && value_at(ps[k].grad, i) == 0.0;
      const double w = value_at(ps[k].value, i);
      descends = descends && w * value_at(g[k], i) <= 0.0;
      moved = moved || w != 0.0;
    }
  out.push_back({"contract: an update leaves the gradient zero", consumed});
  out.push_back({"a first step from zero descends: each weight moves against its gradient",
                 descends && moved});
}

// The updates of one step may come in any order.
bool any_order(const Make& make, DType dtype) {
  auto a = make(), b = make();
  std::vector<Parameter> pa = parameters(dtype, 2), pb = parameters(dtype, 2);
  a->build(pa);
  b->build(pb);
  for (int step = 0; step < 3; ++step) {
    new_gradients(pa, 50 + step);
    new_gradients(pb, 50 + step);
    a->step(pa);
    b->begin_step();
    for (std::size_t k = pb.size(); k-- > 0;) b->update(k, pb[k]);
  }
  return same_bits(pa, pb);
}

// The state round-trips: copied into a fresh optimizer (with the weights), both go on alike.
bool state_round_trip(const Make& make, DType dtype) {
  auto a = make(), b = make();
  std::vector<Parameter> pa = parameters(dtype, 3), pb = parameters(dtype, 3);
  a->build(pa);
  b->build(pb);
  for (int step = 0; step < 3; ++step) {
    new_gradients(pa, 70 + step);
    a->step(pa);
  }
  std::vector<Tensor> sa = a->state(), sb = b->state();
  if (sa.size() != sb.size()) return false;
  for (std::size_t k = 0; k < sa.size(); ++k) {
    if (!(sa[k].shape() == sb[k].shape()) || sa[k].dtype() != sb[k].dtype()) return false;
    sb[k].copy_from(sa[k]);
  }
  for (std::size_t k = 0; k < pa.size(); ++k) pb[k].value.copy_from(pa[k].value);
  for (int step = 0; step < 2; ++step) {
    new_gradients(pa, 90 + step);
    new_gradients(pb, 90 + step);
    a->step(pa);
    b->step(pb);
  }
  return same_bits(pa, pb);
}

}  // namespace

std::vector<Check> check_optimizer(const Registry& registry, const PluginRecord& record,
                                   const std::string& case_json) {
  const json params = json::parse(case_json).value("params", json::object());
  const Make make = [&] {
    return registry.create_as<Optimizer>(
        "optimizer", record.name, Params(params, "conformance: " + record.name), {}, record.device);
  };
  std::vector<Check> out;
  for (DType dtype : {DType::float32, DType::float64}) {
    std::vector<std::pair<std::string, bool>> results;
    first_step(make, dtype, results);
    results.push_back({"contract: parameters updated in any order end alike (bit for bit)",
                       any_order(make, dtype)});
    results.push_back({"state round trip: copied into a fresh optimizer, both go on bit for bit",
                       state_round_trip(make, dtype)});
    auto opt = make();
    std::vector<Parameter> ps = parameters(dtype, 4);
    opt->build(ps);
    opt->set_learning_rate(0.125);
    results.push_back(
        {"set_learning_rate is read back by learning_rate", opt->learning_rate() == 0.125});
    for (const auto& [what, passed] : results)
      out.push_back({what, "params " + params.dump() + ", " + to_string(dtype), true, passed, ""});
  }
  return out;
}

}  // namespace dtnn::testing
