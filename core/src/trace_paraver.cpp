// Paraver's text trace, as Extrae writes PyDTNN's: the .prv holds a header and event records
// ("2:cpu:appl:task:thread:time:type:value[:type:value]"), a span's value at its begin and 0 at
// its end; the .pcf names the event types and values; the .row names the resources. Each rank is
// a task on a node of its own, each of its threads a thread and a cpu; times are nanoseconds from
// the first span, on rank 0's clock.
#include <algorithm>
#include <map>
#include <tuple>

#include "dtnn/trace_files.hpp"
#include "trace_pydtnn.hpp"

namespace dtnn::trace {

namespace {

struct Record {
  std::int64_t time;
  bool begin;
  std::size_t cpu, task, thread;
  std::string values;  // ":type:value..."
};

std::string pair(std::uint32_t type, std::uint32_t value) {
  return ":" + std::to_string(type) + ":" + std::to_string(value);
}

}  // namespace

ParaverFiles paraver(const std::vector<RankTrace>& ranks, const std::string& date) {
  const std::int64_t origin = first_begin_ns(ranks);
  std::int64_t end = 0;
  std::vector<Record> records;
  std::map<std::uint32_t, std::map<std::uint32_t, std::string>> names;  // type -> value -> name
  std::string nodes, tasks, cpu_names, thread_names, node_names;
  std::size_t cpus = 0, threads = 0;
  for (const RankTrace& r : ranks) {
    const Recorded& rec = r.recorded;
    const std::size_t first_cpu = cpus, task = static_cast<std::size_t>(r.rank) + 1;
    const std::size_t n_threads = std::max<std::size_t>(rec.thread_names.size(), 1);
    cpus += n_threads;
    threads += n_threads;
    nodes += (nodes.empty() ? "" : ",") + std::to_string(n_threads);
    tasks += (tasks.empty() ? "" : ",") + std::to_string(n_threads) + ":" + std::to_string(task);
    node_names += r.host + "\n";
    for (std::size_t t = 0; t < n_threads; ++t) {
      const std::string name = t < rec.thread_names.size() ? rec.thread_names[t] : "training";
      cpu_names += "rank " + std::to_string(r.rank) + " cpu " + std::to_string(t + 1) + "\n";
      thread_names += "rank " + std::to_string(r.rank) + " " + name + "\n";
    }
    for (const Event& e : rec.events) {
      const Label& label = label_of(rec, e);
      const pydtnn::Key key = pydtnn::key_of(label, e.phase);
      const pydtnn::Key phase{kDtnnPhaseEvents, static_cast<std::uint32_t>(e.phase) + 1};
      names[key.type][key.value] = pydtnn::value_name(label, e.phase);
      names[phase.type][phase.value] = to_string(e.phase);
      std::string open = pair(phase.type, phase.value), close = pair(phase.type, 0);
      if (key.type != phase.type) {
        open = pair(key.type, key.value) + open;
        close = pair(key.type, 0) + close;
      }
      const std::int64_t b = e.begin_ns - r.clock_offset_ns - origin;
      const std::int64_t f = b + (e.end_ns - e.begin_ns);
      end = std::max(end, f);
      const std::size_t cpu = first_cpu + e.thread + 1, thread = e.thread + 1u;
      records.push_back({b, true, cpu, task, thread, open});
      records.push_back({f, false, cpu, task, thread, close});
    }
  }
  // By time; at one instant ends before begins, so that a span ends before the next one opens.
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.time, a.begin) < std::tie(b.time, b.begin);
  });
  ParaverFiles f;
  f.prv = "#Paraver (" + date + "):" + std::to_string(end) + "_ns:" + std::to_string(ranks.size()) +
          "(" + nodes + "):1:" + std::to_string(ranks.size()) + "(" + tasks + ")\n";
  for (const Record& r : records)
    f.prv += "2:" + std::to_string(r.cpu) + ":1:" + std::to_string(r.task) + ":" +
             std::to_string(r.thread) + ":" + std::to_string(r.time) + r.values + "\n";
  f.pcf =
      "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
      "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
      "NUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\nDEFAULT_SEMANTIC\n\n"
      "THREAD_FUNC         State As Is\n";
  for (const auto& [type, values] : names) {
    f.pcf += "\n\nEVENT_TYPE\n0    " + std::to_string(type) + "    " + pydtnn::type_name(type) +
             "\nVALUES\n0      End\n";
    for (const auto& [value, name] : values)
      f.pcf += std::to_string(value) + "      " + name + "\n";
  }
  f.row = "LEVEL CPU SIZE " + std::to_string(cpus) + "\n" + cpu_names + "\nLEVEL NODE SIZE " +
          std::to_string(ranks.size()) + "\n" + node_names + "\nLEVEL THREAD SIZE " +
          std::to_string(threads) + "\n" + thread_names;
  return f;
}

}  // namespace dtnn::trace
