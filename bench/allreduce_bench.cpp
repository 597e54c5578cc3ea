// allreduce_bench: the bandwidth of dtnn's gradient allreduce against a bare MPI_Allreduce of the
// same size, under mpirun.
//   mpirun -n 2 allreduce_bench [--mb 1,4,16,64] [--repeats 20] [--timeout 600]
//                               [--mqtt-broker 127.0.0.1:1883 [--mqtt-qos 1]]
// For each size it reports the median time and bus bandwidth (2 (n-1)/n x bytes / time, the
// usual allreduce figure) of:
//   bare MPI      MPI_Allreduce in place on a float32 buffer, nothing else;
//   communicator  the mpi plugin's allreduce, watched by the collective timeout
//   (parallel.timeout_s):
//                 the non-blocking collective, the arrival announcements and the polling wait;
//   exchange      GradientExchange on a one-layer model holding that many parameters, as training
//                 runs it (bucket_size_mb = the size): pack (scale) the gradients into the bucket,
//                 non-blocking allreduce, wait, SGD update from the bucket;
//   update        the SGD step alone, which training takes with or without data parallelism;
//   pack          exchange - communicator - update: the one copy the exchange makes;
//   tcp           the tcp communicator's allreduce between the same ranks on loopback (a star
//                 through rank 0, no TLS), when the plugin is built: its ratio to bare MPI;
//   grpc          the same through the grpc communicator (gRPC streams, no TLS), when built;
//   mqtt          the mqtt communicator's allreduce between the same ranks through the broker at
//                 --mqtt-broker (scripts/mqtt-broker.sh DIR PORT starts one), when given.
// The communicator's ratio to bare MPI is the allreduce path's overhead.
#include <mpi.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/gradient_exchange.hpp"
#include "dtnn/log.hpp"
#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/testing/loopback.hpp"

namespace po = boost::program_options;
using namespace dtnn;

namespace {

template <class F>
double median_seconds(MPI_Comm comm, int repeats, F&& f) {
  std::vector<double> t;
  f();  // warm-up: first-touch and connection set-up
  for (int r = 0; r < repeats; ++r) {
    MPI_Barrier(comm);
    const auto t0 = std::chrono::steady_clock::now();
    f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, comm);  // the slowest rank's time
    t.push_back(s);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// The tcp communicator over the MPI job's ranks on loopback, or null when the plugin is not built.
std::shared_ptr<Communicator> open_tcp(const Registry& registry, Communicator& mpi) {
  if (!registry.find("communicator", "tcp")) return nullptr;
  return open_communicator("tcp", registry, "allreduce_bench",
                           testing::loopback_tcp_parameters(mpi));
}

// The grpc communicator over the MPI job's ranks on loopback, or null when the plugin is not built.
std::shared_ptr<Communicator> open_grpc(const Registry& registry, Communicator& mpi) {
  if (!registry.find("communicator", "grpc")) return nullptr;
  return open_communicator("grpc", registry, "allreduce_bench",
                           testing::loopback_tcp_parameters(mpi));
}

// The mqtt communicator over the MPI job's ranks through `broker`, or null without one.
std::shared_ptr<Communicator> open_mqtt(const Registry& registry, Communicator& mpi,
                                        const std::string& broker, int qos) {
  if (broker.empty()) return nullptr;
  return open_communicator("mqtt", registry, "allreduce_bench",
                           {{"rank", mpi.rank()},
                            {"world_size", mpi.size()},
                            {"broker", broker},
                            {"topic", "dtnn-allreduce-bench"},
                            {"qos", qos}});
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes_arg = "1,4,16,64";
  int repeats = 20;
  double timeout = 600;
  std::string mqtt_broker;
  int mqtt_qos = 1;
  po::options_description desc("allreduce_bench options");
  desc.add_options()("help,h", "help")("mb", po::value(&sizes_arg), "buffer sizes in MiB")(
      "repeats", po::value(&repeats), "timed repeats per size (median reported)")(
      "timeout", po::value(&timeout), "the communicator's collective timeout (0: unwatched)")(
      "mqtt-broker", po::value(&mqtt_broker), "host:port of an MQTT broker: adds the mqtt column")(
      "mqtt-qos", po::value(&mqtt_qos), "the mqtt communicator's qos (0, 1 or 2)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::printf("usage: mpirun -n N allreduce_bench [options]\n");
    std::stringstream s;
    s << desc;
    std::fputs(s.str().c_str(), stdout);
    return 0;
  }
  initialize_runtime(1);
  Registry registry(Registry::default_folders());
  auto comm = open_communicator("mpi", registry, "allreduce_bench");
  comm->set_timeout(timeout);
  const int ranks = comm->size();
  const bool print = comm->rank() == 0;
  set_log_level(LogLevel::quiet);  // tcp's warning that loopback goes in clear
  const std::shared_ptr<Communicator> tcp = open_tcp(registry, *comm);
  const std::shared_ptr<Communicator> grpc = open_grpc(registry, *comm);
  const std::shared_ptr<Communicator> mqtt = open_mqtt(registry, *comm, mqtt_broker, mqtt_qos);
  if (print)
    std::printf("allreduce_bench: %d ranks, float32, median of %d, timeout %g s\n%s\n", ranks,
                repeats, timeout, comm->describe().c_str());
  if (print)
    std::printf("%8s | %22s | %22s %6s | %10s  %8s  %8s | %22s %6s | %22s %6s | %22s %6s\n", "MiB",
                "bare MPI ms  (GB/s)", "communicator ms (GB/s)", "ratio", "exchange ms", "pack",
                "update", "tcp ms      (GB/s)", "ratio", "grpc ms     (GB/s)", "ratio",
                "mqtt ms     (GB/s)", "ratio");

  // The network model dtnn predict takes (dtnn/network_model.hpp), fitted to the bare allreduce:
  // the latency from a one-float allreduce (a tree: ceil(log2 p) messages), the bandwidth from the
  // largest size (a ring: 2(p-1) messages of 1/p of it, after their latencies).
  float one = 1.0f;
  const double tiny = median_seconds(MPI_COMM_WORLD, repeats, [&] {
    MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  double largest_bytes = 0, largest_seconds = 0;
  std::stringstream list(sizes_arg);
  for (std::string item; std::getline(list, item, ',');) {
    const double mib = std::stod(item);
    const auto n = static_cast<std::int64_t>(mib * 1024 * 1024 / 4);
    std::vector<float> buffer(static_cast<std::size_t>(n), 1.0f);
    const double bare = median_seconds(MPI_COMM_WORLD, repeats, [&] {
      MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    if (4.0 * n > largest_bytes) largest_bytes = 4.0 * n, largest_seconds = bare;
    const double via_comm = median_seconds(MPI_COMM_WORLD, repeats, [&] {
      comm->allreduce_sum(buffer.data(), static_cast<std::size_t>(n), DType::float32, "bench");
    });

    // A model of one fc layer with n - 1 weights... close enough: units x inputs + units.
    const std::int64_t units = 1024, inputs = std::max<std::int64_t>(1, n / units - 1);
    ModelOptions mo;
    mo.max_batch = 1;
    Model model(parse_model_spec(nlohmann::json::parse(R"({"layers": [{"type": "fc", "units": )" +
                                                       std::to_string(units) + "}]}"),
                                 "bench"),
                mo, Shape{inputs}, registry);
    auto sgd = registry.create_as<Optimizer>(
        "optimizer", "sgd", Params(nlohmann::json{{"learning_rate", 0.0}}, "bench: optimizer"), {});
    sgd->build(model.parameters());
    ExchangeOptions eo;
    eo.bucket_bytes = static_cast<std::size_t>(n) * 4;
    GradientExchange exchange(model, *comm, eo);
    const double via_exchange = median_seconds(MPI_COMM_WORLD, repeats, [&] {
      exchange.begin(1.0 / ranks);
      exchange.contribute_nothing();  // every layer's gradients ready, as at the end of backward
      exchange.finish(*sgd);
    });
    double params_bytes = 0;
    for (const Parameter& p : model.parameters()) params_bytes += 4.0 * p.value.numel();
    const double bus = 2.0 * (ranks - 1) / ranks;
    auto gbs = [&](double bytes, double s) { return bus * bytes / s / 1e9; };
    const auto params = model.parameters();
    const double update = median_seconds(MPI_COMM_WORLD, repeats, [&] { sgd->step(params); });
    const double pack = std::max(0.0, via_exchange - via_comm - update);  // the rest
    const double via_tcp = !tcp ? 0 : median_seconds(MPI_COMM_WORLD, repeats, [&] {
      tcp->allreduce_sum(buffer.data(), static_cast<std::size_t>(n), DType::float32, "bench");
    });
    const double via_grpc = !grpc ? 0 : median_seconds(MPI_COMM_WORLD, repeats, [&] {
      grpc->allreduce_sum(buffer.data(), static_cast<std::size_t>(n), DType::float32, "bench");
    });
    const double via_mqtt = !mqtt ? 0 : median_seconds(MPI_COMM_WORLD, repeats, [&] {
      mqtt->allreduce_sum(buffer.data(), static_cast<std::size_t>(n), DType::float32, "bench");
    });
    if (print)
      std::printf(
          "%8.3f | %10.3f  (%7.2f)   | %10.3f  (%7.2f)   %6.2f | %10.3f  %8.3f  %8.3f | "
          "%10.3f  (%7.2f)   %6.2f | %10.3f  (%7.2f)   %6.2f | %10.3f  (%7.2f)   %6.2f\n",
          mib, bare * 1e3, gbs(4.0 * n, bare), via_comm * 1e3, gbs(4.0 * n, via_comm),
          via_comm / bare, via_exchange * 1e3, pack * 1e3, update * 1e3, via_tcp * 1e3,
          tcp ? gbs(4.0 * n, via_tcp) : 0.0, via_tcp / bare, via_grpc * 1e3,
          grpc ? gbs(4.0 * n, via_grpc) : 0.0, via_grpc / bare, via_mqtt * 1e3,
          mqtt ? gbs(4.0 * n, via_mqtt) : 0.0, via_mqtt / bare);
  }
  if (print && ranks > 1 && largest_bytes > 0) {
    const double p = ranks, latency = tiny / std::ceil(std::log2(p));
    const double transfer = largest_seconds - 2 * (p - 1) * latency;
    const double gbps = transfer > 0 ? 2 * (p - 1) / p * largest_bytes * 8 / transfer / 1e9 : 0;
    std::printf("network model (dtnn predict --network): latency_us=%.2f,bandwidth_gbps=%.1f\n",
                latency * 1e6, gbps);
  }
  return 0;
}
