// A connection to one peer: a non-blocking TCP socket, with TLS over it when the run has TLS.
// Reads and writes move whole buffers before a deadline; every error names the peer ("rank 2
// (10.0.0.7:41022)") and what went wrong, and a peer that closes the connection is an error, not
// a hang.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "deadline.hpp"
#include "departures.hpp"
#include "frame.hpp"

using SSL = struct ssl_st;

namespace dtnn_tcp {

using dtnn_net::Deadline;

using dtnn_net::PeerGone;

class TlsContext;

class Stream {
 public:
  Stream(int fd, std::string peer);  // takes the socket
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // The TLS handshake; a joining rank checks that the certificate names `host`.
  void start_tls(const TlsContext& tls, const std::string& host, Deadline deadline);
  bool secure() const { return ssl_ != nullptr; }
  // After the handshake: the common name of the peer's certificate ("" without TLS or without one).
  std::string peer_common_name() const;

  void write(const void* data, std::size_t bytes, Deadline deadline);
  void read(void* data, std::size_t bytes, Deadline deadline);

  // One collective's data frame (dtnn_net::Star's link): sent; or received, its header checked
  // against the collective's number and length (an Error naming the peer otherwise).
  void send(const void* data, std::size_t bytes, std::uint64_t seq, Deadline deadline);
  void receive(void* into, std::size_t bytes, std::uint64_t seq, Deadline deadline);

  void send_frame(const FrameHeader& header, const void* payload, Deadline deadline);
  FrameHeader read_header(Deadline deadline);
  // A control frame of `type` (hello, welcome), its payload at most kMaxControlBytes. A refusal
  // read instead is an Error with the peer's reason.
  std::vector<unsigned char> read_control(FrameType type, Deadline deadline);

  const std::string& peer() const { return peer_; }
  void set_peer(std::string peer) { peer_ = std::move(peer); }

 private:
  void wait(short events, Deadline deadline, const char* doing);
  void after_tls_failure(int result, Deadline deadline, const char* doing);
  [[noreturn]] void fail(const std::string& what) const;
  // Throws PeerGone: the peer closed the connection, reset it, or did not answer in time.
  [[noreturn]] void gone(const std::string& what) const;

  int fd_;
  SSL* ssl_ = nullptr;
  std::string peer_;
  std::vector<unsigned char> small_;  // a small frame, header and payload together
};

}  // namespace dtnn_tcp
