// PyDTNN's simple tracer output: a row per event (type and value), its calls, its total time and
// the median of its times (the upper median, as PyDTNN takes it), in seconds; rank 0's events.
#include <algorithm>
#include <cstdio>
#include <map>

#include "dtnn/trace_files.hpp"
#include "trace_pydtnn.hpp"

namespace dtnn::trace {

std::string simple_csv(const RankTrace& rank) {
  struct Row {
    std::string name;
    std::vector<double> seconds;
  };
  std::map<pydtnn::Key, Row> rows;
  const Recorded& rec = rank.recorded;
  for (const Event& e : rec.events) {
    const Label& label = label_of(rec, e);
    Row& row = rows[pydtnn::key_of(label, e.phase)];
    if (row.name.empty()) row.name = pydtnn::value_name(label, e.phase);
    row.seconds.push_back(static_cast<double>(e.end_ns - e.begin_ns) * 1e-9);
  }
  std::string out = "Event type;Event value;Event name;Calls;Total time;Median of times\n";
  for (auto& [key, row] : rows) {
    std::sort(row.seconds.begin(), row.seconds.end());
    double total = 0;
    for (double s : row.seconds) total += s;
    char line[256];
    std::snprintf(line, sizeof line, ";%u;%s;%zu;%.9g;%.9g\n", key.value, row.name.c_str(),
                  row.seconds.size(), total, row.seconds[row.seconds.size() / 2]);
    out += pydtnn::type_name(key.type) + line;
  }
  return out;
}

}  // namespace dtnn::trace
