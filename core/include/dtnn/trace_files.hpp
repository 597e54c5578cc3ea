// trace_files: a run's recordings (dtnn/trace.hpp) gathered from every rank, and written as
//   - Chrome's trace-event JSON (.json), for Perfetto's UI and chrome://tracing: a process per
//     rank, a track per thread, each bucket's allreduce as an async span beside them;
//   - PyDTNN's simple tracer CSV (.csv): per event, its calls, total and median seconds;
//   - Paraver's text trace (.prv with its .pcf and .row), with PyDTNN's event types and values,
//     as Extrae writes them for PyDTNN.
// The ranks' clocks are aligned to rank 0's by an offset measured over the communicator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/trace.hpp"

namespace dtnn::trace {

// dtnn's own event type in the CSV and Paraver files (PyDTNN's are 60000001 and 60000002): the
// phases, value = Phase + 1.
inline constexpr std::uint32_t kDtnnPhaseEvents = 60000100;

struct RankTrace {
  int rank = 0;
  std::string host;
  std::int64_t clock_offset_ns = 0;  // this rank's steady clock minus rank 0's
  Recorded recorded;
};

// The writers' time zero: the earliest span of any rank on rank 0's clock (0 when there is none).
DTNN_CORE_EXPORT std::int64_t first_begin_ns(const std::vector<RankTrace>& ranks);
// An event's label (label 0, a span named by its phase, for a number out of range).
inline const Label& label_of(const Recorded& r, const Event& e) {
  return e.label < r.labels.size() ? r.labels[e.label] : r.labels.front();
}

// Collective: this rank's steady clock minus rank 0's, the median over `rounds` of the instants
// each rank leaves a barrier.
DTNN_CORE_EXPORT std::int64_t clock_offset_ns(Communicator& comm, int rounds = 9);
// Collective: every rank's recording, at rank 0 (the other ranks get none).
DTNN_CORE_EXPORT std::vector<RankTrace> gather(Communicator& comm, const Recorded& mine,
                                               std::int64_t clock_offset_ns);

DTNN_CORE_EXPORT std::string chrome_json(const std::vector<RankTrace>& ranks);
// PyDTNN's columns, "Event type;Event value;Event name;Calls;Total time;Median of times", of
// rank 0's events (as PyDTNN writes rank 0's), seconds.
DTNN_CORE_EXPORT std::string simple_csv(const RankTrace& rank);
struct ParaverFiles {
  std::string prv, pcf, row;
};
// date: the header's "dd/mm/yy at hh:mm".
DTNN_CORE_EXPORT ParaverFiles paraver(const std::vector<RankTrace>& ranks, const std::string& date);

// Throws unless file names one of the formats below by its extension.
DTNN_CORE_EXPORT void check_trace_name(const std::string& file);
// The files a trace named `file` is written to: file, and for .prv its .pcf and .row beside it.
DTNN_CORE_EXPORT std::vector<std::string> trace_files(const std::string& file);
// Writes the ranks' trace to file in the format its extension names (.json, .csv, .prv; an
// error for another), each of trace_files(file) atomically and independently of the others'
// failure (one error then names every file that failed); returns the files written.
DTNN_CORE_EXPORT std::vector<std::string> write_trace(const std::string& file,
                                                      const std::vector<RankTrace>& ranks);

}  // namespace dtnn::trace
