#include "dtnn/trace.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "dtnn/energy_meter.hpp"

namespace dtnn::trace {

std::atomic<bool> recording_flag{false};

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::step:
      return "step";
    case Phase::data:
      return "data";
    case Phase::load:
      return "load";
    case Phase::forward:
      return "forward";
    case Phase::backward:
      return "backward";
    case Phase::loss:
      return "loss";
    case Phase::optimizer:
      return "optimizer";
    case Phase::pack:
      return "pack";
    case Phase::allreduce:
      return "allreduce";
    case Phase::comm_wait:
      return "comm_wait";
    case Phase::sync:
      return "sync";
    case Phase::model_sync:
      return "model_sync";
    case Phase::evaluation:
      return "evaluation";
    case Phase::checkpoint:
      return "checkpoint";
    case Phase::tuning:
      return "tuning";
    case Phase::augment:
      return "augment";
    case Phase::count:
      break;
  }
  return "?";
}

namespace {

constexpr std::size_t kPhases = static_cast<std::size_t>(Phase::count);

// One thread's events and totals. Buffers live as long as the process (a thread that ended keeps
// its events for collect()); start() empties them.
struct Buffer {
  std::vector<Event> events;
  std::array<double, kPhases> seconds{};
  std::array<double, kPhases> joules{};
  std::array<std::int64_t, kPhases> calls{};
  std::uint16_t index = 0;
  std::string name;
};

struct State {
  std::mutex mutex;  // buffers, labels
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<Label> labels{Label{}};
  std::unordered_map<std::string, std::uint32_t> label_index;
  bool timeline = false;
  std::size_t max_events = 0;
  std::atomic<std::size_t> events{0}, dropped{0};
  std::uint64_t generation = 0;
  std::int64_t start_ns = 0;
};

State& state() {
  static State s;
  return s;
}

Buffer& this_thread_buffer() {
  thread_local Buffer* mine = nullptr;
  if (mine) return *mine;
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.buffers.push_back(std::make_unique<Buffer>());
  mine = s.buffers.back().get();
  mine->index = static_cast<std::uint16_t>(s.buffers.size() - 1);
  mine->name = mine->index == 0 ? "training" : "thread " + std::to_string(mine->index);
  return *mine;
}

}  // namespace

void start(const Options& options) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    for (auto& b : s.buffers) {
      b->events.clear();
      b->seconds.fill(0);
      b->joules.fill(0);
      b->calls.fill(0);
    }
    s.labels.assign(1, Label{});
    s.label_index.clear();
    s.timeline = options.timeline;
    s.max_events = options.max_events;
    s.events = 0;
    s.dropped = 0;
    ++s.generation;
    s.start_ns = now_ns();
  }
  this_thread_buffer().name = "training";  // the caller's thread
  recording_flag.store(true, std::memory_order_relaxed);
}

std::uint64_t generation() {
  std::lock_guard lock(state().mutex);
  return state().generation;
}

void stop() { recording_flag.store(false, std::memory_order_relaxed); }

std::uint32_t intern(const Label& label) {
  State& s = state();
  std::string key = label.name;
  key += '\0';
  key += label.args;
  std::lock_guard lock(s.mutex);
  const auto [it, added] =
      s.label_index.try_emplace(key, static_cast<std::uint32_t>(s.labels.size()));
  if (added) s.labels.push_back(label);
  return it->second;
}

double joules_now() { return energy::now_joules(); }

void record(Phase phase, std::uint32_t label, std::int64_t begin_ns, std::int64_t end_ns,
            double joules) {
  if (!recording()) return;
  Buffer& b = this_thread_buffer();
  const auto p = static_cast<std::size_t>(phase);
  b.seconds[p] += static_cast<double>(end_ns - begin_ns) * 1e-9;
  b.joules[p] += joules;
  ++b.calls[p];
  State& s = state();
  if (!s.timeline) return;
  if (s.events.fetch_add(1, std::memory_order_relaxed) >= s.max_events) {
    s.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  b.events.push_back(Event{begin_ns, end_ns, label, b.index, phase, static_cast<float>(joules)});
}

void name_thread(const std::string& name) {
  Buffer& b = this_thread_buffer();
  std::lock_guard lock(state().mutex);
  b.name = name;
}

Recorded collect() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  Recorded r;
  r.labels = s.labels;
  for (const auto& b : s.buffers) {
    r.events.insert(r.events.end(), b->events.begin(), b->events.end());
    r.thread_names.push_back(b->name);
    for (std::size_t p = 0; p < kPhases; ++p) {
      r.seconds[p] += b->seconds[p];
      r.joules[p] += b->joules[p];
      r.calls[p] += b->calls[p];
    }
  }
  std::stable_sort(r.events.begin(), r.events.end(),
                   [](const Event& a, const Event& b) { return a.begin_ns < b.begin_ns; });
  r.dropped = s.dropped;
  r.max_events = s.max_events;
  r.start_ns = s.start_ns;
  return r;
}

}  // namespace dtnn::trace
