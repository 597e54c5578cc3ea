// Loopback networking for tests and benchmarks of communicators that dial each other.
#pragma once
#include <nlohmann/json.hpp>

namespace dtnn {
class Communicator;
}

namespace dtnn::testing {

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick, released at once).
int free_loopback_port();

// The tcp communicator's parameters that join the ranks of `job` (an MPI job's communicator) on
// loopback: each rank's number, the world size, and rank 0's address at a port rank 0 found free.
// Every rank of job must call it.
nlohmann::json loopback_tcp_parameters(Communicator& job);

}  // namespace dtnn::testing
