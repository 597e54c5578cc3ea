#include "broker_link.hpp"

#include <mosquitto.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "dtnn/error.hpp"
#include "dtnn/log.hpp"

namespace dtnn_mqtt {

using dtnn::Error;

namespace {

// Waits on `cv` until ready() or the deadline; false when the deadline passed first.
template <class Ready>
bool wait_for(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Deadline deadline,
              Ready ready) {
  if (!deadline.limited()) {
    cv.wait(lock, ready);
    return true;
  }
  return cv.wait_until(lock, deadline.at, ready);
}

std::string random_hex(int bytes) {
  std::random_device random;
  std::string out;
  char digit[3];
  for (int i = 0; i < bytes; ++i) {
    std::snprintf(digit, sizeof digit, "%02x", static_cast<unsigned>(random() & 0xff));
    out += digit;
  }
  return out;
}

// libmosquitto counts its users, and sets up OpenSSL on a client's first TLS connect, neither
// thread-safely; links connect one at a time, as ranks of one test process start in parallel.
std::mutex library_mutex;
int library_users = 0;

}  // namespace

BrokerLink::LibraryUse::LibraryUse() {
  std::lock_guard lock(library_mutex);
  if (library_users++ == 0) mosquitto_lib_init();
}

BrokerLink::LibraryUse::~LibraryUse() {
  std::lock_guard lock(library_mutex);
  if (--library_users == 0) mosquitto_lib_cleanup();
}

BrokerLink::BrokerLink(const LinkOptions& options, Deadline deadline) : options_(options) {
  session_topic_ = options_.topic + "/session";
  down_topic_ = options_.topic + "/down";
  up_prefix_ = options_.topic + "/up/";
  own_topic_ = options_.rank == 0 ? down_topic_ : up_prefix_ + std::to_string(options_.rank);

  const std::string id = "dtnn-" + std::to_string(options_.rank) + "-" + random_hex(8);
  mosq_ = mosquitto_new(id.c_str(), true, this);
  if (!mosq_) throw Error("mqtt: cannot make a client (" + std::string(std::strerror(errno)) + ")");
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, 1);
  mosquitto_connect_callback_set(mosq_, on_connect);
  mosquitto_disconnect_callback_set(mosq_, on_disconnect);
  mosquitto_subscribe_callback_set(mosq_, on_subscribe);
  mosquitto_publish_callback_set(mosq_, on_publish);
  mosquitto_message_callback_set(mosq_, on_message);
  mosquitto_log_callback_set(mosq_, on_log);
  try {
    if (options_.tls.on()) {
      const TlsFiles& f = options_.tls;
      if (const int rc = mosquitto_tls_set(mosq_, f.ca.c_str(), nullptr, f.cert.c_str(),
                                           f.key.c_str(), nullptr);
          rc != MOSQ_ERR_SUCCESS)
        throw Error("mqtt: cannot use the TLS files " + f.ca + ", " + f.cert + ", " + f.key + " (" +
                    mosquitto_strerror(rc) + ")");
      mosquitto_tls_opts_set(mosq_, 1, "tlsv1.3", nullptr);  // 1: verify the broker
      mosquitto_tls_insecure_set(mosq_, false);              // ...and that it is the host dialled
    }
    const auto will = gone_message();
    mosquitto_will_set(mosq_, own_topic_.c_str(), static_cast<int>(will.size()), will.data(),
                       options_.qos, false);
    connect(deadline);
    if (options_.rank == 0) {
      subscribe(up_prefix_ + "+", deadline);
    } else {
      subscribe(down_topic_, deadline);
      subscribe(session_topic_, deadline);
    }
  } catch (...) {
    mosquitto_disconnect(mosq_);
    mosquitto_loop_stop(mosq_, false);
    mosquitto_destroy(mosq_);
    throw;
  }
}

BrokerLink::~BrokerLink() {
  // A goodbye, so the ranks that still wait on this one hear it left; acknowledged within 2 s, or
  // given up on (the broker is gone).
  const auto bye = gone_message();
  int mid = 0;
  if (mosquitto_publish(mosq_, &mid, own_topic_.c_str(), static_cast<int>(bye.size()), bye.data(),
                        options_.qos, false) == MOSQ_ERR_SUCCESS &&
      options_.qos > 0) {
    std::unique_lock lock(mutex_);
    wait_for(arrived_, lock, Deadline::after(2.0),
             [&] { return last_published_ >= mid || !lost_.empty(); });
  }
  mosquitto_disconnect(mosq_);
  mosquitto_loop_stop(mosq_, false);
  mosquitto_destroy(mosq_);
}

std::vector<unsigned char> BrokerLink::gone_message() const {
  Header gone;
  gone.type = MessageType::gone;
  gone.from = static_cast<std::uint32_t>(options_.rank);
  gone.to = options_.rank == 0 ? kEveryRank : 0;
  gone.session = options_.will_session;
  const auto nonce = encode_answer(options_.nonce, "");
  gone.total = nonce.size();
  return encode_message(gone, nonce.data(), nonce.size());
}

void BrokerLink::connect(Deadline deadline) {
  const HostPort& b = options_.broker;
  for (;;) {
    std::unique_lock library(library_mutex);
    const int rc = mosquitto_connect(mosq_, b.host.c_str(), b.port_number(), options_.keepalive_s);
    const int error = errno;
    library.unlock();
    if (rc == MOSQ_ERR_SUCCESS) break;
    const std::string why = rc == MOSQ_ERR_ERRNO ? std::strerror(error) : mosquitto_strerror(rc);
    if (rc == MOSQ_ERR_TLS)
      throw Error("mqtt: TLS with the broker at " + b.text() + " failed (" + last_error_ +
                  "; does tls_ca sign the broker's certificate, and does it name " + b.host + "?)");
    if (deadline.passed() || rc != MOSQ_ERR_ERRNO)
      throw Error("mqtt: cannot reach the broker at " + b.text() + " within " +
                  deadline.seconds_text() + " s (" + why +
                  "; parallel.communicator.connect_timeout_s)");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the broker may start later
  }
  if (const int rc = mosquitto_loop_start(mosq_); rc != MOSQ_ERR_SUCCESS)
    throw Error(std::string("mqtt: cannot start the network thread (") + mosquitto_strerror(rc) +
                ")");
  std::unique_lock lock(mutex_);
  if (!wait_for(arrived_, lock, deadline, [&] { return connack_ || !lost_.empty(); }))
    throw Error("mqtt: the broker at " + b.text() + " did not accept rank " +
                std::to_string(options_.rank) + " within " + deadline.seconds_text() + " s");
  if (connack_ && *connack_ != 0)
    throw Error("mqtt: the broker at " + b.text() + " refused rank " +
                std::to_string(options_.rank) + " (" + mosquitto_connack_string(*connack_) + ")");
  if (!connack_)
    throw Error("mqtt: the broker at " + b.text() +
                " closed the connection before accepting rank " + std::to_string(options_.rank) +
                " (" + lost_ +
                (secure() ? "; is this rank's certificate signed by the broker's authority?)"
                          : "; does the broker require TLS?)"));
}

void BrokerLink::subscribe(const std::string& topic, Deadline deadline) {
  int mid = 0;
  if (const int rc = mosquitto_subscribe(mosq_, &mid, topic.c_str(), options_.qos);
      rc != MOSQ_ERR_SUCCESS)
    throw Error("mqtt: cannot subscribe to " + topic + " (" + mosquitto_strerror(rc) + ")");
  std::unique_lock lock(mutex_);
  if (!wait_for(arrived_, lock, deadline, [&] { return subscribed_.count(mid) || !lost_.empty(); }))
    throw Error("mqtt: the broker at " + options_.broker.text() +
                " did not confirm the subscription to " + topic);
  if (!lost_.empty())
    throw Error("mqtt: lost the broker at " + options_.broker.text() + ": " + lost_);
  if (subscribed_[mid] > 2)
    throw Error("mqtt: the broker at " + options_.broker.text() + " refused the subscription to " +
                topic + " (its access control list?)");
}

void BrokerLink::publish(const std::vector<unsigned char>& payload) {
  const int rc =
      mosquitto_publish(mosq_, nullptr, own_topic_.c_str(), static_cast<int>(payload.size()),
                        payload.data(), options_.qos, false);
  if (rc != MOSQ_ERR_SUCCESS) {
    std::lock_guard lock(mutex_);
    if (!lost_.empty())
      throw Error("mqtt: lost the broker at " + options_.broker.text() + " while publishing on " +
                  own_topic_ + ": " + lost_);
    throw Error("mqtt: cannot publish on " + own_topic_ + " (" + mosquitto_strerror(rc) + ")");
  }
}

void BrokerLink::publish_session(const std::vector<unsigned char>& payload) {
  const int rc =
      mosquitto_publish(mosq_, nullptr, session_topic_.c_str(), static_cast<int>(payload.size()),
                        payload.empty() ? nullptr : payload.data(), options_.qos, true);
  if (rc != MOSQ_ERR_SUCCESS)
    throw Error("mqtt: cannot publish on " + session_topic_ + " (" + mosquitto_strerror(rc) + ")");
}

std::string BrokerLink::name(int sender) const {
  if (sender == kSessionSlot) return "rank 0's session (topic " + session_topic_ + ")";
  if (sender == 0) return "rank 0 (topic " + down_topic_ + ")";
  return "rank " + std::to_string(sender) + " (topic " + up_prefix_ + std::to_string(sender) + ")";
}

void BrokerLink::fail_waiting(int sender, Deadline deadline, const char* doing) {
  if (!lost_.empty())
    throw Error("mqtt: lost the broker at " + options_.broker.text() + " while " + doing +
                " from " + name(sender) + ": " + lost_);
  throw PeerGone("mqtt: " + name(sender) + ": no answer within " + deadline.seconds_text() +
                 " s while " + doing);
}

std::vector<unsigned char> BrokerLink::next(int sender, Deadline deadline, const char* doing) {
  std::unique_lock lock(mutex_);
  auto& queue = inbox_[sender];
  wait_for(arrived_, lock, deadline, [&] { return !queue.empty() || !lost_.empty(); });
  if (queue.empty()) fail_waiting(sender, deadline, doing);
  std::vector<unsigned char> out = std::move(queue.front());
  queue.pop_front();
  return out;
}

std::vector<unsigned char> BrokerLink::next_from_any(int& sender, Deadline deadline,
                                                     const char* doing) {
  std::unique_lock lock(mutex_);
  auto first = [&]() -> std::deque<std::vector<unsigned char>>* {
    for (auto& [slot, queue] : inbox_)
      if (!queue.empty()) {
        sender = slot;
        return &queue;
      }
    return nullptr;
  };
  wait_for(arrived_, lock, deadline, [&] { return first() || !lost_.empty(); });
  auto* queue = first();
  if (!queue) {
    if (!lost_.empty())
      throw Error("mqtt: lost the broker at " + options_.broker.text() + " while " + doing + ": " +
                  lost_);
    throw Error(std::string("mqtt: no answer within ") + deadline.seconds_text() + " s while " +
                doing);
  }
  std::vector<unsigned char> out = std::move(queue->front());
  queue->pop_front();
  return out;
}

std::optional<int> BrokerLink::slot_of(const std::string& topic) const {
  if (options_.rank != 0) {
    if (topic == down_topic_) return 0;
    if (topic == session_topic_) return kSessionSlot;
    return std::nullopt;
  }
  if (!topic.starts_with(up_prefix_)) return std::nullopt;
  const std::string digits = topic.substr(up_prefix_.size());
  if (digits.empty() || digits.size() > 7 || digits.find_first_not_of("0123456789") != digits.npos)
    return std::nullopt;
  const int r = std::stoi(digits);
  if (r < 1 || r >= options_.size || digits != std::to_string(r)) return std::nullopt;
  return r;
}

void BrokerLink::on_connect(mosquitto*, void* self, int rc) {
  auto* link = static_cast<BrokerLink*>(self);
  std::lock_guard lock(link->mutex_);
  link->connack_ = rc;
  link->arrived_.notify_all();
}

void BrokerLink::on_disconnect(mosquitto* mosq, void* self, int rc) {
  auto* link = static_cast<BrokerLink*>(self);
  {
    std::lock_guard lock(link->mutex_);
    if (rc != 0 && link->lost_.empty())
      link->lost_ = std::string(mosquitto_strerror(rc)) +
                    (link->last_error_.empty() ? "" : "; " + link->last_error_);
    if (link->lost_.empty()) link->lost_ = "disconnected";
    link->arrived_.notify_all();
  }
  mosquitto_disconnect(mosq);  // no reconnection: a run does not resume a lost connection
}

void BrokerLink::on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted) {
  auto* link = static_cast<BrokerLink*>(self);
  std::lock_guard lock(link->mutex_);
  link->subscribed_[mid] = count > 0 ? granted[0] : 0x80;
  link->arrived_.notify_all();
}

void BrokerLink::on_publish(mosquitto*, void* self, int mid) {
  auto* link = static_cast<BrokerLink*>(self);
  std::lock_guard lock(link->mutex_);
  link->last_published_ = std::max(link->last_published_, mid);
  link->arrived_.notify_all();
}

void BrokerLink::on_message(mosquitto*, void* self, const mosquitto_message* message) {
  auto* link = static_cast<BrokerLink*>(self);
  const std::string topic = message->topic ? message->topic : "";
  const std::optional<int> slot = link->slot_of(topic);
  std::lock_guard lock(link->mutex_);
  if (!slot) {
    if (link->strangers_.insert(topic).second)
      dtnn::log_warning("mqtt: ignoring messages on " + topic +
                        " (no rank of this run publishes there)");
    return;
  }
  if (message->payloadlen <= 0) return;  // a retained session cleared
  const auto* bytes = static_cast<const unsigned char*>(message->payload);
  link->inbox_[*slot].emplace_back(bytes, bytes + message->payloadlen);
  link->arrived_.notify_all();
}

void BrokerLink::on_log(mosquitto*, void* self, int level, const char* text) {
  if (level != MOSQ_LOG_ERR || !text) return;
  auto* link = static_cast<BrokerLink*>(self);
  std::lock_guard lock(link->mutex_);
  link->last_error_ = text;
}

}  // namespace dtnn_mqtt
