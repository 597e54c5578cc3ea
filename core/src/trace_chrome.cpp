// Chrome's trace-event JSON (the "JSON Array/Object Format" Perfetto and chrome://tracing read):
// metadata events name each rank's process and its threads; every span is a complete event
// ("X") on its thread, but a collective in flight, which is an async pair ("b", "e") of its own
// track, so that its overlap with backward shows. Times are microseconds from the first span of
// any rank, on rank 0's clock.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "dtnn/trace_files.hpp"

namespace dtnn::trace {

namespace {

using nlohmann::json;

std::string us(std::int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", static_cast<double>(ns) * 1e-3);
  return b;
}

std::string quoted(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The args object of an event: its label's arguments and, when it counts flops, its GFLOP/s; with
// an energy meter, its joules.
std::string args_of(const Label& label, std::int64_t duration_ns, float joules) {
  std::string args = label.args.empty() ? "{}" : label.args;
  if (joules != 0) {
    char j[48];
    std::snprintf(j, sizeof j, "\"joules\":%.6g", static_cast<double>(joules));
    args.insert(args.size() - 1, std::string(args.size() > 2 ? "," : "") + j);
  }
  if (label.flops > 0 && duration_ns > 0) {
    char g[48];
    std::snprintf(g, sizeof g, "\"gflops\":%.2f", label.flops / static_cast<double>(duration_ns));
    args.insert(args.size() - 1, std::string(args.size() > 2 ? "," : "") + g);
  }
  return args;
}

}  // namespace

std::string chrome_json(const std::vector<RankTrace>& ranks) {
  const std::int64_t origin = first_begin_ns(ranks);
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto line = [&](const std::string& s) {
    if (!first) out += ",\n";
    out += s;
    first = false;
  };
  std::size_t dropped = 0;
  std::uint64_t async_id = 0;
  std::string offsets;
  for (const RankTrace& r : ranks) {
    const Recorded& rec = r.recorded;
    dropped += rec.dropped;
    offsets += (offsets.empty() ? "" : ",") + std::to_string(r.clock_offset_ns);
    const std::string pid = std::to_string(r.rank);
    line("{\"ph\":\"M\",\"pid\":" + pid + ",\"name\":\"process_name\",\"args\":{\"name\":" +
         quoted("rank " + pid + " (" + r.host + ")") + "}}");
    line("{\"ph\":\"M\",\"pid\":" + pid +
         ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + pid + "}}");
    std::vector<bool> used(rec.thread_names.size(), false);
    for (const Event& e : rec.events)
      if (e.thread < used.size()) used[e.thread] = true;
    for (std::size_t t = 0; t < used.size(); ++t)
      if (used[t])
        line("{\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + std::to_string(t) +
             ",\"name\":\"thread_name\",\"args\":{\"name\":" + quoted(rec.thread_names[t]) + "}}");
    for (const Event& e : rec.events) {
      const Label& label = label_of(rec, e);
      const std::string name = quoted(label.name.empty() ? to_string(e.phase) : label.name);
      const std::string cat = quoted(to_string(e.phase));
      const std::int64_t begin = e.begin_ns - r.clock_offset_ns - origin;
      const std::int64_t duration = e.end_ns - e.begin_ns;
      const std::string where = ",\"pid\":" + pid + ",\"tid\":" + std::to_string(e.thread);
      if (e.phase == Phase::allreduce) {
        const std::string id = ",\"id\":" + std::to_string(++async_id);
        line("{\"ph\":\"b\",\"name\":" + name + ",\"cat\":" + cat + id + where +
             ",\"ts\":" + us(begin) + ",\"args\":" + args_of(label, duration, e.joules) + "}");
        line("{\"ph\":\"e\",\"name\":" + name + ",\"cat\":" + cat + id + where +
             ",\"ts\":" + us(begin + duration) + "}");
        continue;
      }
      line("{\"ph\":\"X\",\"name\":" + name + ",\"cat\":" + cat + where + ",\"ts\":" + us(begin) +
           ",\"dur\":" + us(duration) + ",\"args\":" + args_of(label, duration, e.joules) + "}");
    }
  }
  out += "\n],\"otherData\":{\"producer\":\"dtnn\",\"ranks\":" + std::to_string(ranks.size()) +
         ",\"dropped_events\":" + std::to_string(dropped) + ",\"clock_offsets_ns\":[" + offsets +
         "]}}\n";
  return out;
}

}  // namespace dtnn::trace
