// The communicator checks of plugin_conformance.hpp, run on every rank of an open communicator.
#include <algorithm>
#include <numeric>

#include "dtnn/communicator.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

namespace {

template <class T>
bool all_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a == b;
}

}  // namespace

std::vector<Check> check_communicator(Communicator& comm) {
  const int rank = comm.rank(), size = comm.size();
  const std::string setting =
      "rank " + std::to_string(rank) + " of " + std::to_string(size) + ", " + comm.describe();
  std::vector<Check> out;
  auto check = [&](const std::string& what, bool passed, const std::string& detail = "") {
    out.push_back({what, setting, true, passed, detail});
  };
  check("rank and size", size >= 1 && rank >= 0 && rank < size);

  std::vector<double> ranks(static_cast<std::size_t>(size), -1.0);
  const double mine = rank;
  comm.allgather(&mine, ranks.data(), 1, DType::float64, "conformance allgather");
  std::vector<double> expected_ranks(ranks.size());
  std::iota(expected_ranks.begin(), expected_ranks.end(), 0.0);
  check("allgather puts each rank's values at its rank", all_equal(ranks, expected_ranks));

  const double total = size * (size + 1) / 2.0;  // sum over ranks of rank + 1
  {
    std::vector<float> f = {1.0f * float(rank + 1), 2.0f * float(rank + 1), 3.0f * float(rank + 1)};
    comm.allreduce_sum(f.data(), f.size(), DType::float32, "conformance allreduce float32");
    std::vector<double> d = {0.5 * (rank + 1), -1.0 * (rank + 1)};
    comm.allreduce_sum(d.data(), d.size(), DType::float64, "conformance allreduce float64");
    check("allreduce_sum sums every rank's values (float32, float64)",
          f == std::vector<float>{float(total), float(2 * total), float(3 * total)} &&
              d == std::vector<double>{0.5 * total, -total});
  }
  {
    std::vector<double> d(1000);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = double(i) * (rank + 1);
    auto request =
        comm.iallreduce_sum(d.data(), d.size(), DType::float64, "conformance iallreduce");
    request->wait();
    bool right = request->test();
    for (std::size_t i = 0; i < d.size(); ++i) right = right && d[i] == double(i) * total;
    check("iallreduce_sum, waited for, sums every rank's values", right);
  }
  {
    const int root = size - 1;
    std::vector<double> d = {double(rank), double(rank) * 2};
    comm.broadcast(d.data(), d.size(), DType::float64, root, "conformance broadcast");
    check("broadcast gives the root's values to every rank",
          d == std::vector<double>{double(root), double(root) * 2});
  }
  {  // block j of rank r's send: 100 r + j, twice; rank r's block for this rank lands at r
    std::vector<float> send(2 * static_cast<std::size_t>(size)), recv(send.size(), -1.0f),
        expected(send.size());
    for (int j = 0; j < size; ++j) {
      send[2 * j] = send[2 * j + 1] = float(100 * rank + j);
      expected[2 * j] = expected[2 * j + 1] = float(100 * j + rank);
    }
    comm.alltoall(send.data(), recv.data(), 2, DType::float32, "conformance alltoall");
    check("alltoall gives each rank its block of every rank's values", recv == expected);
  }
  comm.barrier("conformance barrier");
  check("barrier returns", true);
  return out;
}

}  // namespace dtnn::testing
