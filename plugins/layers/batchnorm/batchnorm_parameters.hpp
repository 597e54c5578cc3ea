// The parameters of batchnorm, with their defaults (what its CPU plugin and its CUDA twin both
// declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
// Its PyDTNN arrays (dtnn/pydtnn_arrays.hpp) too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/pydtnn_arrays.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kBatchnormParameters =
    R"({"momentum": 0.9, "epsilon": 1e-5, "gamma": 1.0, "beta": 0.0, "sync_stats": false,
        "activation": ""})";

// batchnorm: "momentum" in [0, 1), "epsilon" > 0, the initial "gamma" and "beta", "sync_stats",
// "activation" ("" or "relu": batchnorm+relu fused). What a device cannot do is its plugin's to
// refuse.
struct Batchnorm {
  double momentum, epsilon, gamma, beta;
  bool sync_stats, relu;
  explicit Batchnorm(const Params& p)
      : momentum(p.get_double("momentum")),
        epsilon(p.get_double("epsilon")),
        gamma(p.get_double("gamma")),
        beta(p.get_double("beta")),
        sync_stats(p.get_bool("sync_stats")),
        relu(p.get_string("activation") == "relu") {
    if (!relu && !p.get_string("activation").empty())
      p.fail("activation", "\"\" or \"relu\" (batchnorm+relu fused)");
    if (!(momentum >= 0.0 && momentum < 1.0)) p.fail("momentum", "a number in [0, 1)");
    if (!(epsilon > 0.0)) p.fail("epsilon", "a positive number");
  }
};

}  // namespace dtnn::layer_parameters

namespace dtnn::pydtnn_names {

// BatchNormalization: gamma and beta (parameters prefix + "gamma", "beta"), running_mean and
// running_var (the layer's state, in that order), each (C,).
inline void batchnorm(PydtnnArrays& out, const std::vector<Parameter>& ps,
                      const std::vector<Tensor>& state, const std::string& prefix = "") {
  const std::string key = out.layer("BatchNormalization");
  for (const char* name : {"gamma", "beta"}) {
    const Tensor& t = *PydtnnArrays::find(ps, prefix + name);
    out.array(key + name, t, {t.dim(0)}, {0});
  }
  DTNN_CHECK(state.size() == 2, "batchnorm state: running mean and variance");
  out.array(key + "running_mean", state[0], {state[0].dim(0)}, {0});
  out.array(key + "running_var", state[1], {state[1].dim(0)}, {0});
}

}  // namespace dtnn::pydtnn_names
