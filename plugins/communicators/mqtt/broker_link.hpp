// One rank's connection to the MQTT broker (libmosquitto): TLS 1.3 with the rank's certificate when
// the run has TLS, the topics the rank reads subscribed before it speaks, and what arrives kept per
// sender until a collective asks for it. Rank r publishes on <topic>/up/<r>, which rank 0 reads;
// rank 0 publishes on <topic>/down, which every other rank reads, and announces the run on
// <topic>/session (retained, so a rank that subscribes later still reads it). A rank's last will,
// which the broker publishes when its connection drops, is a gone message on its own topic: the
// ranks waiting on it hear at once that it left.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "deadline.hpp"
#include "departures.hpp"
#include "host_port.hpp"
#include "launch_settings.hpp"
#include "message.hpp"

struct mosquitto;
struct mosquitto_message;

namespace dtnn_mqtt {

using dtnn_net::Deadline;
using dtnn_net::HostPort;
using dtnn_net::PeerGone;  // a rank that left (its gone message) or did not answer in time
using dtnn_net::TlsFiles;

struct LinkOptions {
  HostPort broker;
  TlsFiles tls;       // all three files, or none
  std::string topic;  // the run's topic prefix
  int rank = 0, size = 1;
  int qos = 1;
  int keepalive_s = 30;
  Session will_session{};   // what the last will's gone message names (rank 0's session)
  std::uint64_t nonce = 0;  // this process's, in its hello and its gone messages
};

class BrokerLink {
 public:
  // Connects (retrying until the broker listens or the deadline passes), then subscribes.
  BrokerLink(const LinkOptions& options, Deadline deadline);
  ~BrokerLink();  // says goodbye (a gone message), then disconnects
  BrokerLink(const BrokerLink&) = delete;
  BrokerLink& operator=(const BrokerLink&) = delete;

  static constexpr int kSessionSlot = -1;

  // Publishes on this rank's topic (retained: on <topic>/session); an Error once the broker is
  // lost.
  void publish(const std::vector<unsigned char>& payload);
  void publish_session(const std::vector<unsigned char>& payload);  // empty: clears it

  // The next payload from `sender` (a rank, or kSessionSlot); an Error naming the sender and
  // `doing` when the deadline passes or the broker is lost.
  std::vector<unsigned char> next(int sender, Deadline deadline, const char* doing);
  // The next payload from any sender (while the ranks meet), lowest slot first: which in `sender`.
  std::vector<unsigned char> next_from_any(int& sender, Deadline deadline, const char* doing);

  // "rank 2 (topic dtnn/up/2)"
  std::string name(int sender) const;
  const std::string& own_topic() const { return own_topic_; }
  bool secure() const { return options_.tls.on(); }

 private:
  void connect(Deadline deadline);
  // This process's last will and goodbye: a gone message with its nonce, on its own topic.
  std::vector<unsigned char> gone_message() const;
  void subscribe(const std::string& topic, Deadline deadline);
  [[noreturn]] void fail_waiting(int sender, Deadline deadline, const char* doing);
  // Which slot a topic's messages go to; nullopt for a topic this rank does not read.
  std::optional<int> slot_of(const std::string& topic) const;

  static void on_connect(mosquitto*, void* self, int rc);
  static void on_disconnect(mosquitto*, void* self, int rc);
  static void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted);
  static void on_publish(mosquitto*, void* self, int mid);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message);
  static void on_log(mosquitto*, void* self, int level, const char* text);

  // libmosquitto initialised while any link lives, and cleaned up after the last: its cleanup frees
  // what its init made (an OpenSSL UI method), which would leak when the plugin is unloaded.
  // Declared first, so it is made before the client and released after it.
  struct LibraryUse {
    LibraryUse();
    ~LibraryUse();
    LibraryUse(const LibraryUse&) = delete;
    LibraryUse& operator=(const LibraryUse&) = delete;
  };
  LibraryUse library_;
  LinkOptions options_;
  std::string own_topic_, session_topic_, down_topic_, up_prefix_;
  mosquitto* mosq_ = nullptr;

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<int, std::deque<std::vector<unsigned char>>> inbox_;
  std::optional<int> connack_;       // the broker's answer to CONNECT
  std::map<int, int> subscribed_;    // message id -> granted QoS
  int last_published_ = 0;           // the newest message id the broker acknowledged
  std::string lost_;                 // why the connection to the broker ended, once it did
  std::string last_error_;           // libmosquitto's latest error line
  std::set<std::string> strangers_;  // topics already warned of
};

}  // namespace dtnn_mqtt
