// The trace recording (dtnn/trace.hpp), its writers (dtnn/trace_files.hpp), checked against small
// hand-written files, and the run profile's arithmetic (dtnn/run_profile.hpp).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "dtnn/communicator.hpp"
#include "dtnn/layer_trace.hpp"
#include "dtnn/run_profile.hpp"
#include "dtnn/trace.hpp"
#include "dtnn/trace_files.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// Two ranks by hand: rank 0 runs layer 0's forward (a conv2d of 2 Gflop) and backward, then a
// bucket's allreduce (layer 0's allreduce_dw) and the optimizer; rank 1's clock is 1 ms ahead and
// it ran one forward. Times in ns.
std::vector<trace::RankTrace> two_ranks() {
  trace::Recorded r0;
  r0.labels = {trace::Label{},
               {"000 conv2d forward", R"({"layer":0,"type":"conv2d"})", 2e9,
                layer_trace::kPydtnnModelEvents, 1},
               {"000 conv2d backward", R"({"layer":0,"type":"conv2d"})", 4e9,
                layer_trace::kPydtnnModelEvents, 2},
               {"gradients, bucket 1 of 1", R"({"layer":0,"type":"conv2d"})", 0,
                layer_trace::kPydtnnModelEvents, 3}};
  r0.thread_names = {"training"};
  r0.events = {{1000, 2001000, 1, 0, trace::Phase::forward},
               {2001000, 6001000, 2, 0, trace::Phase::backward},
               {3000000, 8000000, 3, 0, trace::Phase::allreduce},
               {8000000, 8500000, 0, 0, trace::Phase::optimizer}};
  trace::Recorded r1;
  r1.labels = {trace::Label{}, r0.labels[1]};
  r1.thread_names = {"training", "batch loader"};
  r1.events = {{1001000, 3001000, 1, 0, trace::Phase::forward},
               {1500000, 1700000, 0, 1, trace::Phase::load}};
  return {{0, "a", 0, r0}, {1, "b", 1000000, r1}};
}

}  // namespace

TEST_CASE("the trace records spans only while on, with labels, threads, totals and a cap") {
  { const trace::Span ignored(trace::Phase::step); }  // before start: nothing
  trace::start({true, 3});
  const std::uint32_t a = trace::intern({"a", "{}"}), b = trace::intern({"b", ""});
  CHECK(a == trace::intern({"a", "{}"}));
  CHECK(a != b);
  { const trace::Span s(trace::Phase::forward, a); }
  std::thread([&] {
    trace::name_thread("worker");
    const trace::Span s(trace::Phase::load, b);
  }).join();
  for (int i = 0; i < 3; ++i) const trace::Span s(trace::Phase::optimizer);  // 2 past the cap
  trace::stop();
  { const trace::Span ignored(trace::Phase::step); }
  const trace::Recorded r = trace::collect();
  REQUIRE(r.events.size() == 3);
  CHECK(r.dropped == 2);
  CHECK(r.events[0].phase == trace::Phase::forward);
  CHECK(r.labels[r.events[0].label].name == "a");
  CHECK(r.events[1].phase == trace::Phase::load);
  CHECK(r.thread_names[r.events[1].thread] == "worker");
  CHECK(r.thread_names[r.events[0].thread] == "training");
  CHECK(r.calls[static_cast<std::size_t>(trace::Phase::optimizer)] == 3);  // totals: every span
  CHECK(r.calls[static_cast<std::size_t>(trace::Phase::step)] == 0);
  for (const trace::Event& e : r.events) CHECK(e.end_ns >= e.begin_ns);
}

TEST_CASE("PyDTNN's simple tracer CSV of a hand-made trace") {
  // Rank 0 only, as PyDTNN writes; rows by type then value; the upper median.
  const std::string expected =
      "Event type;Event value;Event name;Calls;Total time;Median of times\n"
      "Model;1;000_conv2d_forward;1;0.002;0.002\n"
      "Model;2;000_conv2d_backward;1;0.004;0.004\n"
      "Model;3;000_conv2d_allreduce_dw;1;0.005;0.005\n"
      "dtnn phase;7;optimizer;1;0.0005;0.0005\n";
  CHECK(trace::simple_csv(two_ranks()[0]) == expected);
}

TEST_CASE("Paraver's .prv, .pcf and .row of a hand-made trace") {
  const trace::ParaverFiles f = trace::paraver(two_ranks(), "25/11/26 at 10:00");
  // Rank 1's forward began at its 1,001,000 ns, which is rank 0's 1,000 ns: both at 0.
  const std::string prv =
      "#Paraver (25/11/26 at 10:00):8499000_ns:2(1,2):1:2(1:1,2:2)\n"
      "2:1:1:1:1:0:60000001:1:60000100:4\n"
      "2:2:1:2:1:0:60000001:1:60000100:4\n"
      "2:3:1:2:2:499000:60000100:3\n"
      "2:3:1:2:2:699000:60000100:0\n"
      "2:1:1:1:1:2000000:60000001:0:60000100:0\n"
      "2:2:1:2:1:2000000:60000001:0:60000100:0\n"
      "2:1:1:1:1:2000000:60000001:2:60000100:5\n"
      "2:1:1:1:1:2999000:60000001:3:60000100:9\n"
      "2:1:1:1:1:6000000:60000001:0:60000100:0\n"
      "2:1:1:1:1:7999000:60000001:0:60000100:0\n"
      "2:1:1:1:1:7999000:60000100:7\n"
      "2:1:1:1:1:8499000:60000100:0\n";
  CHECK(f.prv == prv);
  CHECK(f.pcf.find("EVENT_TYPE\n0    60000001    Model\nVALUES\n0      End\n1      "
                   "000_conv2d_forward\n2      000_conv2d_backward\n3      "
                   "000_conv2d_allreduce_dw\n") != std::string::npos);
  CHECK(f.pcf.find("EVENT_TYPE\n0    60000100    dtnn phase\nVALUES\n0      End\n3      load\n4  "
                   "    forward\n5      backward\n7      optimizer\n9      allreduce\n") !=
        std::string::npos);
  CHECK(f.row ==
        "LEVEL CPU SIZE 3\nrank 0 cpu 1\nrank 1 cpu 1\nrank 1 cpu 2\n\nLEVEL NODE SIZE 2\na\nb\n\n"
        "LEVEL THREAD SIZE 3\nrank 0 training\nrank 1 training\nrank 1 batch loader\n");
}

TEST_CASE("Chrome trace events of a hand-made trace: ranks, threads, aligned clocks, async") {
  const json j = json::parse(trace::chrome_json(two_ranks()));
  std::map<std::string, json> by_name;
  int async_begin = 0, async_end = 0;
  std::set<std::pair<int, std::string>> threads;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads.insert({e["pid"].get<int>(), e["args"]["name"].get<std::string>()});
    if (e["ph"] == "b") ++async_begin;
    if (e["ph"] == "e") ++async_end;
    if (e["ph"] == "X")
      by_name[e["name"].get<std::string>() + "@" + std::to_string(e["pid"].get<int>())] = e;
  }
  CHECK(threads == std::set<std::pair<int, std::string>>{
                       {0, "training"}, {1, "training"}, {1, "batch loader"}});
  CHECK(async_begin == 1);
  CHECK(async_end == 1);
  // Both forwards start at 0 once rank 1's 1 ms offset is taken away.
  CHECK(by_name.at("000 conv2d forward@0")["ts"].get<double>() == 0.0);
  CHECK(by_name.at("000 conv2d forward@1")["ts"].get<double>() == 0.0);
  CHECK(by_name.at("000 conv2d forward@0")["dur"].get<double>() == 2000.0);
  // 2 Gflop in 2 ms: 1000 GFLOP/s.
  CHECK(by_name.at("000 conv2d forward@0")["args"]["gflops"].get<double>() == 1000.0);
  CHECK(by_name.at("load@1")["tid"] == 1);
  CHECK(j["otherData"]["ranks"] == 2);
}

TEST_CASE("gather brings a rank's recording over the communicator unchanged") {
  LocalCommunicator comm;
  const trace::RankTrace mine = two_ranks()[1];
  const auto all = trace::gather(comm, mine.recorded, 123);
  REQUIRE(all.size() == 1);
  CHECK(all[0].clock_offset_ns == 123);
  CHECK(all[0].recorded.thread_names == mine.recorded.thread_names);
  REQUIRE(all[0].recorded.events.size() == mine.recorded.events.size());
  for (std::size_t i = 0; i < mine.recorded.events.size(); ++i) {
    CHECK(all[0].recorded.events[i].begin_ns == mine.recorded.events[i].begin_ns);
    CHECK(all[0].recorded.events[i].end_ns == mine.recorded.events[i].end_ns);
    CHECK(all[0].recorded.events[i].thread == mine.recorded.events[i].thread);
    CHECK(all[0].recorded.events[i].phase == mine.recorded.events[i].phase);
  }
  CHECK(all[0].recorded.labels[1].name == "000 conv2d forward");
  CHECK(all[0].recorded.labels[1].flops == 2e9);
  CHECK(trace::clock_offset_ns(comm) == 0);
}

TEST_CASE("the run profile: per layer and per step, evaluation left out") {
  trace::Recorded r = two_ranks()[0].recorded;
  // Two steps of 10 ms, one of them waiting 1 ms for data; an evaluation with a forward inside.
  r.events.push_back({0, 10000000, 0, 0, trace::Phase::step});
  r.events.push_back({20000000, 30000000, 0, 0, trace::Phase::evaluation});
  r.events.push_back({21000000, 29000000, 1, 0, trace::Phase::forward});
  r.seconds[static_cast<std::size_t>(trace::Phase::step)] = 0.02;
  r.calls[static_cast<std::size_t>(trace::Phase::step)] = 2;
  r.seconds[static_cast<std::size_t>(trace::Phase::data)] = 0.001;
  r.seconds[static_cast<std::size_t>(trace::Phase::optimizer)] = 0.0005;
  const json p = run_profile::to_json(r);
  REQUIRE(p["layers"].size() == 1);
  const json& l = p["layers"][0];
  CHECK(l["forward_ms"].get<double>() == doctest::Approx(2.0));  // the evaluation's 8 ms left out
  CHECK(l["backward_ms"].get<double>() == doctest::Approx(4.0));
  CHECK(l["share_of_steps"].get<double>() == doctest::Approx(6.0 / 20.0));
  CHECK(l["gflops"].get<double>() == doctest::Approx(6e9 / 0.006 * 1e-9));
  CHECK(p["step_ms"].get<double>() == doctest::Approx(10.0));
  CHECK(p["data_wait_ms"].get<double>() == doctest::Approx(0.5));
  CHECK(p["optimizer_ms"].get<double>() == doctest::Approx(0.25));
  // The step's work: the layers' 6 GFLOP over two steps of 10 ms.
  CHECK(p["gflop_per_step"].get<double>() == doctest::Approx(3.0));
  CHECK(p["step_gflops"].get<double>() == doctest::Approx(300.0));
  json with_peak = p;
  with_peak["fp32_peak_gflops"] = 600.0;  // what the experiment adds on a CPU
  const std::string table = run_profile::table(with_peak);
  CHECK(table.find("| 000   | conv2d |") != std::string::npos);
  CHECK(table.find("waiting for data 0.500 ms (5.0%)") != std::string::npos);
  CHECK(table.find("3.000 GFLOP in the layers at 300.0 GFLOP/s over the step (50% of the FP32 "
                   "peak, 600 GFLOPS measured)") != std::string::npos);
}

TEST_CASE("a trace file's name gives its format, or a clear error") {
  CHECK_NOTHROW(trace::check_trace_name("run.json"));
  CHECK_NOTHROW(trace::check_trace_name("run.prv"));
  CHECK_THROWS_WITH(trace::check_trace_name("run.txt"),
                    doctest::Contains("'run.txt': expected a name ending in .json"));
}
