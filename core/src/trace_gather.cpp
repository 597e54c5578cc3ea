// Every rank's trace recording brought to rank 0 over the communicator's allgather, in chunks so
// that no rank holds more than a chunk of every rank at once; and the ranks' clock offsets.
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dtnn/error.hpp"
#include "dtnn/trace_files.hpp"

namespace dtnn::trace {

namespace {

// An event travels as begin and end (two doubles each: exact nanoseconds), label, thread and phase,
// joules.
constexpr std::size_t kEventDoubles = 7;

using nlohmann::json;

constexpr std::size_t kChunk = std::size_t{1} << 18;  // doubles per rank per allgather

// A 64-bit integer as two doubles (each exact) and back.
void put(std::vector<double>& out, std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  out.push_back(static_cast<double>(u >> 32));
  out.push_back(static_cast<double>(u & 0xffffffffu));
}
std::int64_t get(const double* in) {
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(in[0]) << 32) |
                                   static_cast<std::uint64_t>(in[1]));
}

// Every rank's values at rank 0, in rank order; empty elsewhere. Collective.
std::vector<std::vector<double>> gather_doubles(Communicator& comm, const std::vector<double>& mine,
                                                const char* what) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<double> sizes(ranks);
  const double n = static_cast<double>(mine.size());
  comm.allgather(&n, sizes.data(), 1, DType::float64, what);
  const auto largest = static_cast<std::size_t>(*std::max_element(sizes.begin(), sizes.end()));
  std::vector<std::vector<double>> all(comm.rank() == 0 ? ranks : 0);
  std::vector<double> send(kChunk), recv(kChunk * ranks);
  for (std::size_t at = 0; at < largest; at += kChunk) {
    std::fill(send.begin(), send.end(), 0.0);
    if (at < mine.size())
      std::copy(mine.begin() + static_cast<std::ptrdiff_t>(at),
                mine.begin() + static_cast<std::ptrdiff_t>(std::min(mine.size(), at + kChunk)),
                send.begin());
    comm.allgather(send.data(), recv.data(), kChunk, DType::float64, what);
    for (std::size_t r = 0; r < all.size(); ++r) {
      const auto size = static_cast<std::size_t>(sizes[r]);
      if (at >= size) continue;
      const double* from = recv.data() + r * kChunk;
      all[r].insert(all[r].end(), from, from + std::min(kChunk, size - at));
    }
  }
  return all;
}

std::vector<double> encode_text(const std::string& text) {
  std::vector<double> out(text.size());
  std::transform(text.begin(), text.end(), out.begin(),
                 [](char c) { return static_cast<double>(static_cast<unsigned char>(c)); });
  return out;
}
std::string decode_text(const std::vector<double>& in) {
  std::string out(in.size(), '\0');
  std::transform(in.begin(), in.end(), out.begin(),
                 [](double c) { return static_cast<char>(static_cast<unsigned char>(c)); });
  return out;
}

// What is not an event: labels, threads, totals, and where the rank ran.
std::string describe(const Recorded& r, const std::string& host, std::int64_t offset) {
  json labels = json::array();
  for (const Label& l : r.labels)
    labels.push_back({l.name, l.args, l.flops, l.pydtnn_type, l.pydtnn_value});
  return json{{"labels", labels},           {"threads", r.thread_names}, {"seconds", r.seconds},
              {"calls", r.calls},           {"joules", r.joules},        {"dropped", r.dropped},
              {"max_events", r.max_events}, {"start_ns", r.start_ns},    {"host", host},
              {"offset_ns", offset}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

RankTrace decode(int rank, const std::vector<double>& events, const std::string& text) {
  const json j = json::parse(text);
  RankTrace t;
  t.rank = rank;
  t.host = j["host"];
  t.clock_offset_ns = j["offset_ns"];
  Recorded& r = t.recorded;
  for (const json& l : j["labels"])
    r.labels.push_back({l[0].get<std::string>(), l[1].get<std::string>(), l[2].get<double>(),
                        l[3].get<std::uint32_t>(), l[4].get<std::uint32_t>()});
  r.thread_names = j["threads"].get<std::vector<std::string>>();
  r.seconds = j["seconds"];
  r.calls = j["calls"];
  r.joules = j["joules"];
  r.dropped = j["dropped"];
  r.max_events = j["max_events"];
  r.start_ns = j["start_ns"];
  for (std::size_t i = 0; i + kEventDoubles <= events.size(); i += kEventDoubles) {
    Event e;
    e.begin_ns = get(&events[i]);
    e.end_ns = get(&events[i + 2]);
    e.label = static_cast<std::uint32_t>(events[i + 4]);
    const auto where = static_cast<std::uint32_t>(events[i + 5]);
    e.thread = static_cast<std::uint16_t>(where >> 8);
    e.phase = static_cast<Phase>(where & 0xff);
    e.joules = static_cast<float>(events[i + 6]);
    r.events.push_back(e);
  }
  return t;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

}  // namespace

std::int64_t clock_offset_ns(Communicator& comm, int rounds) {
  if (comm.size() == 1) return 0;
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::int64_t> offsets;
  std::vector<double> all(2 * ranks);
  for (int i = 0; i < rounds; ++i) {
    comm.barrier("trace clocks");
    std::vector<double> mine;
    put(mine, now_ns());
    comm.allgather(mine.data(), all.data(), 2, DType::float64, "trace clocks");
    offsets.push_back(get(&all[2 * static_cast<std::size_t>(comm.rank())]) - get(&all[0]));
  }
  std::nth_element(offsets.begin(), offsets.begin() + rounds / 2, offsets.end());
  return offsets[static_cast<std::size_t>(rounds / 2)];
}

std::vector<RankTrace> gather(Communicator& comm, const Recorded& mine, std::int64_t offset_ns) {
  std::vector<double> events;
  events.reserve(kEventDoubles * mine.events.size());
  for (const Event& e : mine.events) {
    put(events, e.begin_ns);
    put(events, e.end_ns);
    events.push_back(e.label);
    events.push_back(
        static_cast<double>((std::uint32_t{e.thread} << 8) | static_cast<std::uint32_t>(e.phase)));
    events.push_back(e.joules);
  }
  const auto all_events = gather_doubles(comm, events, "trace events");
  const auto all_texts =
      gather_doubles(comm, encode_text(describe(mine, host_name(), offset_ns)), "trace labels");
  std::vector<RankTrace> out;
  for (std::size_t r = 0; r < all_events.size(); ++r)
    out.push_back(decode(static_cast<int>(r), all_events[r], decode_text(all_texts[r])));
  return out;
}

}  // namespace dtnn::trace
