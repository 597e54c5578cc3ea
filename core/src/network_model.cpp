#include "dtnn/network_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "dtnn/checked.hpp"
#include "dtnn/error.hpp"

namespace dtnn {

namespace {

double log2_ceil(int ranks) {
  return std::ceil(std::log2(static_cast<double>(std::max(ranks, 1))));
}

}  // namespace

double NetworkModel::message_seconds(double bytes) const {
  const double transfer = bandwidth_gbps > 0 ? bytes * 8.0 / (bandwidth_gbps * 1e9) : 0.0;
  return latency_us * 1e-6 + transfer;
}

double NetworkModel::allreduce_seconds(double bytes, int ranks) const {
  if (ranks <= 1) return 0.0;
  const double p = ranks;
  const double ring = 2 * (p - 1) * message_seconds(bytes / p);
  const double tree = log2_ceil(ranks) * message_seconds(bytes);
  return std::min(ring, tree);
}

double NetworkModel::broadcast_seconds(double bytes, int ranks) const {
  return ranks <= 1 ? 0.0 : log2_ceil(ranks) * message_seconds(bytes);
}

double NetworkModel::allgather_seconds(double bytes_per_rank, int ranks) const {
  return ranks <= 1 ? 0.0 : (ranks - 1) * message_seconds(bytes_per_rank);
}

// p - 1 steps, each sending one block to one rank and receiving one from another.
double NetworkModel::alltoall_seconds(double bytes_per_block, int ranks) const {
  return ranks <= 1 ? 0.0 : (ranks - 1) * message_seconds(bytes_per_block);
}

double NetworkModel::barrier_seconds(int ranks) const {
  return ranks <= 1 ? 0.0 : 2 * log2_ceil(ranks) * message_seconds(0);
}

std::string NetworkModel::describe() const {
  char b[96];
  if (bandwidth_gbps > 0)
    std::snprintf(b, sizeof b, "%g us latency, %g Gb/s", latency_us, bandwidth_gbps);
  else
    std::snprintf(b, sizeof b, "%g us latency, unlimited bandwidth", latency_us);
  return b;
}

NetworkModel parse_network(const std::string& text, const std::string& where) {
  NetworkModel m;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const auto value = eq == std::string::npos ? std::nullopt : parse_double(item.substr(eq + 1));
    if (!value || !(*value >= 0) || !std::isfinite(*value))
      throw Error(where + ": '" + item +
                  "': expected latency_us=MICROSECONDS or bandwidth_gbps=GIGABITS (numbers >= 0)");
    if (key == "latency_us")
      m.latency_us = *value;
    else if (key == "bandwidth_gbps")
      m.bandwidth_gbps = *value;
    else
      throw Error(where + ": unknown '" + key + "'; expected latency_us or bandwidth_gbps");
  }
  return m;
}

}  // namespace dtnn
