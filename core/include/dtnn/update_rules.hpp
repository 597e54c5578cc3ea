// The per-element formulas of the optimizers, shared by the CPU plugins (plugins/optimizers) and
// the CUDA ones (plugins/cuda): one definition, two executors. Each rule updates one weight w from
// its gradient g (consumed: g = 0 afterwards) and its state; the plugins' headers give the
// formulas. Compiled as host and device code under nvcc.
#pragma once
#include <cmath>

#include "dtnn/host_device.hpp"

namespace dtnn::rules {

// sgd without momentum (both rules): w -= lr (g + decay w).
template <class T>
struct Sgd {
  T lr, decay;
  DTNN_HOST_DEVICE void apply(T& w, T& g) const {
    w -= lr * (g + decay * w);
    g = T(0);
  }
};

// sgd with momentum, rule "textbook": g += decay w; v = mu v + g; w -= lr (nesterov ? g + mu v : v).
template <class T>
struct SgdMomentum {
  T lr, mu, decay;
  bool nesterov;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& v) const {
    const T gi = g + decay * w;
    v = mu * v + gi;
    w -= lr * (nesterov ? gi + mu * v : v);
    g = T(0);
  }
};

// sgd with momentum, rule "pydtnn": v = mu v + g; w -= lr (decay w + (nesterov ? g + mu v : v)).
template <class T>
struct PydtnnSgdMomentum {
  T lr, mu, decay;
  bool nesterov;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& v) const {
    v = mu * v + g;
    w -= lr * (decay * w + (nesterov ? g + mu * v : v));
    g = T(0);
  }
};

// adam, rule "textbook". inv_sqrt_c2 = 1/sqrt(1 - b2^t), step = lr/(1 - b1^t).
template <class T>
struct Adam {
  T b1, b2, eps, decay, step, inv_sqrt_c2;
  // From the hyperparameters and the step's bias corrections c1 = 1 - b1^t, c2 = 1 - b2^t.
  DTNN_HOST_DEVICE static Adam from(double b1, double b2, double eps, double decay, double lr,
                                    double c1, double c2) {
    return {T(b1), T(b2), T(eps), T(decay), T(lr / c1), T(1.0 / std::sqrt(c2))};
  }
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    const T gj = g + decay * w;
    m = b1 * m + (T(1) - b1) * gj;
    v = b2 * v + (T(1) - b2) * gj * gj;
    w -= step * m / (std::sqrt(v) * inv_sqrt_c2 + eps);
    g = T(0);
  }
};

// adam, rule "pydtnn". inv_c2 = 1/(1 - b2^t), step = lr/(1 - b1^t), lr_decay = lr * decay.
template <class T>
struct PydtnnAdam {
  T b1, b2, eps, lr_decay, step, inv_c2;
  DTNN_HOST_DEVICE static PydtnnAdam from(double b1, double b2, double eps, double decay,
                                          double lr, double c1, double c2) {
    return {T(b1), T(b2), T(eps), T(lr * decay), T(lr / c1), T(1.0 / c2)};
  }
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    m = b1 * m + (T(1) - b1) * g;
    v = b2 * v + (T(1) - b2) * g * g;
    w -= lr_decay * w + step * m / std::sqrt(v * inv_c2 + eps);
    g = T(0);
  }
};

// rmsprop, rule "textbook": g += decay w; s = rho s + (1 - rho) g^2; w -= lr g / (sqrt(s) + eps).
template <class T>
struct RmsProp {
  T lr, rho, eps, decay;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& s) const {
    const T gi = g + decay * w;
    s = rho * s + (T(1) - rho) * gi * gi;
    w -= lr * gi / (std::sqrt(s) + eps);
    g = T(0);
  }
};

// rmsprop, rule "pydtnn": s = rho s + (1 - rho) g^2; w -= lr (decay w + g / sqrt(s + eps)).
template <class T>
struct PydtnnRmsProp {
  T lr, rho, eps, decay;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& s) const {
    s = rho * s + (T(1) - rho) * g * g;
    w -= lr * (decay * w + g / std::sqrt(s + eps));
    g = T(0);
  }
};

// nadam, rule "textbook" (PyTorch's NAdam), with this step's coefficients from NadamBase:
// grad_coef = lr (1 - mu_t) / (1 - P_t), moment_coef = lr mu_{t+1} / (1 - P_t mu_{t+1}),
// inv_c2 = 1 / (1 - b2^t).
template <class T>
struct Nadam {
  T b1, b2, eps, decay, inv_c2, grad_coef, moment_coef;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    const T gj = g + decay * w;
    m = b1 * m + (T(1) - b1) * gj;
    v = b2 * v + (T(1) - b2) * gj * gj;
    const T d = std::sqrt(v * inv_c2) + eps;
    w -= (grad_coef * gj + moment_coef * m) / d;
    g = T(0);
  }
};

// nadam, rule "pydtnn": inv_c1 = 1 / (1 - b1^t), inv_c2 = 1 / (1 - b2^t).
template <class T>
struct PydtnnNadam {
  T b1, b2, eps, decay, lr, inv_c1, inv_c2;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    m = b1 * m + (T(1) - b1) * g;
    v = b2 * v + (T(1) - b2) * g * g;
    const T mt = (m + (T(1) - b1) * g) * inv_c1;
    w -= lr * (decay * w + mt / std::sqrt(v * inv_c2 + eps));
    g = T(0);
  }
};

}  // namespace dtnn::rules
