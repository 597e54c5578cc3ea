// trace: what a run spends its time on, recorded as spans. Code marks its phases with a Span (a
// layer's forward, a batch's loading, a bucket's allreduce...); while recording is on, each span
// becomes
//   - an event of the timeline (dtnn run --trace FILE: begin, end, thread, label), kept in
//     per-thread buffers up to a cap on the events of the process, counted when dropped past it;
//   - and a share of its phase's totals (dtnn run --profile: data wait, optimizer, ...).
// Recording off (the default), a Span costs one relaxed load of a flag.
//
// Labels say what a span was ("conv2d_3 forward") and carry the timeline's arguments; a site that
// traces the same thing again interns its label once and reuses the number. Events hold steady
// clock nanoseconds of this process; trace_writers.hpp aligns the ranks' clocks and writes files.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn::trace {

enum class Phase : std::uint8_t {
  step,        // one training step of this rank
  data,        // a batch read, augmented and handed over (on the training thread: waited for)
  load,        // a batch made in the background (the loader's thread)
  forward,     // a layer's forward
  backward,    // a layer's backward
  loss,        // the loss and the metrics of a batch
  optimizer,   // parameter updates
  pack,        // gradients packed into a bucket
  allreduce,   // a bucket's collective, from its start to its completion
  comm_wait,   // waiting for a bucket's collective to complete
  sync,        // a collective of the step's bookkeeping (status, totals)
  model_sync,  // weights averaged or broadcast over the ranks
  evaluation,  // a validation or test pass
  checkpoint,  // a checkpoint written
  tuning,      // best_of's timed rounds
  augment,     // a batch augmented and normalised (inside its data or load span)
  count
};
DTNN_CORE_EXPORT const char* to_string(Phase phase);

// What a span was: a name and the timeline's arguments (a JSON object's text, "" for none); flops
// when the span computes a known amount (the timeline then shows GFLOP/s); the PyDTNN event
// (type and value, 0 when it has none) for the CSV and Paraver files.
struct Label {
  std::string name;
  std::string args;
  double flops = 0;
  std::uint32_t pydtnn_type = 0, pydtnn_value = 0;
};

// One span: [begin_ns, end_ns) of thread `thread` (0: the first thread that recorded, the
// training thread), label an index into labels(); joules: the energy meter's advance over the span
// (dtnn/energy_meter.hpp; 0 without a meter).
struct Event {
  std::int64_t begin_ns = 0, end_ns = 0;
  std::uint32_t label = 0;
  std::uint16_t thread = 0;
  Phase phase = Phase::step;
  float joules = 0;
};

struct Options {
  bool timeline = false;             // keep events (dtnn run --trace)
  std::size_t max_events = 4000000;  // over every thread; about 32 bytes each
};

// Starts recording (and forgets what was recorded): totals always, events when options.timeline.
DTNN_CORE_EXPORT void start(const Options& options);
DTNN_CORE_EXPORT void stop();
// Counts start() calls: a cache of label numbers is valid within one generation.
DTNN_CORE_EXPORT std::uint64_t generation();

DTNN_CORE_EXPORT extern std::atomic<bool> recording_flag;
inline bool recording() { return recording_flag.load(std::memory_order_relaxed); }

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The label's number: the same for an equal name and args.
DTNN_CORE_EXPORT std::uint32_t intern(const Label& label);
// A span that has ended (the calling thread's), when recording.
DTNN_CORE_EXPORT void record(Phase phase, std::uint32_t label, std::int64_t begin_ns,
                             std::int64_t end_ns, double joules = 0);
// The installed energy meter's reading (joules), 0 without one: spans read it at both ends.
DTNN_CORE_EXPORT double joules_now();
// Names the calling thread on the timeline ("training", "batch loader").
DTNN_CORE_EXPORT void name_thread(const std::string& name);

// Marks a scope: recorded at its end when recording was on at its start.
class Span {
 public:
  explicit Span(Phase phase, std::uint32_t label = 0)
      : phase_(phase),
        label_(label),
        begin_(recording() ? now_ns() : -1),
        begin_joules_(begin_ >= 0 ? joules_now() : 0) {}
  ~Span() {
    if (begin_ >= 0) record(phase_, label_, begin_, now_ns(), joules_now() - begin_joules_);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  Phase phase_;
  std::uint32_t label_;
  std::int64_t begin_;
  double begin_joules_;
};

// What was recorded since start(), for the writers and the profile.
struct Recorded {
  std::vector<Label> labels;              // label 0 is "" (a span named by its phase)
  std::vector<Event> events;              // every thread's, by begin
  std::vector<std::string> thread_names;  // by thread index
  std::size_t dropped = 0;                // events past max_events
  std::size_t max_events = 0;
  std::int64_t start_ns = 0;                                             // when start() was called
  std::array<double, static_cast<std::size_t>(Phase::count)> seconds{};  // totals per phase
  std::array<double, static_cast<std::size_t>(Phase::count)> joules{};
  std::array<std::int64_t, static_cast<std::size_t>(Phase::count)> calls{};
};
// Call it once the threads that record have finished (or stopped recording).
DTNN_CORE_EXPORT Recorded collect();

}  // namespace dtnn::trace
