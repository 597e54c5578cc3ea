#include "stream.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dtnn/error.hpp"
#include "tls.hpp"

namespace dtnn_tcp {

using dtnn::Error;

Stream::Stream(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}

Stream::~Stream() {
  if (ssl_) {
    SSL_shutdown(ssl_);  // one try, no wait: the peer may be gone
    SSL_free(ssl_);
  }
  ::close(fd_);
}

void Stream::fail(const std::string& what) const { throw Error("tcp: " + peer_ + ": " + what); }

void Stream::gone(const std::string& what) const { throw PeerGone("tcp: " + peer_ + ": " + what); }

void Stream::wait(short events, Deadline deadline, const char* doing) {
  pollfd p{fd_, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, deadline.poll_ms());
    if (r > 0) return;  // ready, or an error the next call reports
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(std::string(doing) + ": poll failed (" + std::strerror(errno) + ")");
    gone("no answer within " + deadline.seconds_text() + " s while " + doing);
  }
}

void Stream::after_tls_failure(int result, Deadline deadline, const char* doing) {
  const int e = SSL_get_error(ssl_, result);
  if (e == SSL_ERROR_WANT_READ) return wait(POLLIN, deadline, doing);
  if (e == SSL_ERROR_WANT_WRITE) return wait(POLLOUT, deadline, doing);
  if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0))
    gone(std::string("closed the connection while ") + doing);
  if (e == SSL_ERROR_SYSCALL && (errno == ECONNRESET || errno == EPIPE))
    gone(std::string("closed the connection while ") + doing);
  if (e == SSL_ERROR_SYSCALL) fail(std::string(doing) + ": " + std::strerror(errno));
  // OpenSSL 3 reports a connection closed without TLS's close_notify (a killed process) so.
  if (e == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
    gone(std::string("closed the connection while ") + doing);
  std::string why = openssl_errors();
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK) why += std::string(": ") + X509_verify_cert_error_string(verify);
  fail(std::string("TLS failed while ") + doing + " (" + why + ")");
}

void Stream::start_tls(const TlsContext& tls, const std::string& host, Deadline deadline) {
  ERR_clear_error();
  ssl_ = SSL_new(tls.get());
  if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) fail("cannot start TLS (" + openssl_errors() + ")");
  if (!tls.server()) {
    // Rank 0's certificate must name the host this rank dialled: an address or a DNS name.
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) {
      SSL_set1_host(ssl_, host.c_str());
      SSL_set_tlsext_host_name(ssl_, host.c_str());
    }
  }
  for (;;) {
    ERR_clear_error();
    const int r = tls.server() ? SSL_accept(ssl_) : SSL_connect(ssl_);
    if (r == 1) return;
    after_tls_failure(r, deadline, "authenticating (TLS handshake)");
  }
}

std::string Stream::peer_common_name() const {
  if (!ssl_) return "";
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (!cert) return "";
  char name[256] = {};
  const int n =
      X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof name);
  X509_free(cert);
  return n > 0 ? std::string(name, static_cast<std::size_t>(n)) : std::string();
}

void Stream::write(const void* data, std::size_t bytes, Deadline deadline) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    std::size_t done = 0;
    if (ssl_) {
      ERR_clear_error();
      const int r = SSL_write_ex(ssl_, p, bytes, &done);
      if (r <= 0) {
        after_tls_failure(r, deadline, "sending");
        continue;
      }
    } else {
      const ssize_t w = ::send(fd_, p, bytes, MSG_NOSIGNAL);
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wait(POLLOUT, deadline, "sending");
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
        gone("closed the connection while sending");
      if (w < 0) fail(std::string("sending: ") + std::strerror(errno));
      done = static_cast<std::size_t>(w);
    }
    p += done;
    bytes -= done;
  }
}

void Stream::read(void* data, std::size_t bytes, Deadline deadline) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    std::size_t done = 0;
    if (ssl_) {
      ERR_clear_error();
      const int r = SSL_read_ex(ssl_, p, bytes, &done);
      if (r <= 0) {
        after_tls_failure(r, deadline, "receiving");
        continue;
      }
    } else {
      const ssize_t got = ::recv(fd_, p, bytes, 0);
      if (got == 0) gone("closed the connection while receiving");
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wait(POLLIN, deadline, "receiving");
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && errno == ECONNRESET) gone("closed the connection while receiving");
      if (got < 0) fail(std::string("receiving: ") + std::strerror(errno));
      done = static_cast<std::size_t>(got);
    }
    p += done;
    bytes -= done;
  }
}

void Stream::send_frame(const FrameHeader& header, const void* payload, Deadline deadline) {
  const auto head = encode_header(header);
  if (!ssl_ && header.length > 0 && header.length < 64 * 1024) {
    // Header and a small payload in one segment (no wait for the peer's delayed ACK).
    const auto* bytes = static_cast<const unsigned char*>(payload);
    small_.assign(head.begin(), head.end());
    small_.insert(small_.end(), bytes, bytes + header.length);
    return write(small_.data(), small_.size(), deadline);
  }
  write(head.data(), head.size(), deadline);
  if (header.length > 0) write(payload, header.length, deadline);
}

FrameHeader Stream::read_header(Deadline deadline) {
  std::array<unsigned char, kHeaderBytes> bytes{};
  read(bytes.data(), bytes.size(), deadline);
  try {
    return decode_header(bytes);
  } catch (const Error& e) {
    fail(e.what());
  }
}

std::vector<unsigned char> Stream::read_control(FrameType type, Deadline deadline) {
  const FrameHeader h = read_header(deadline);
  std::vector<unsigned char> payload;
  try {
    expect_frame(h, h.type == FrameType::refusal ? FrameType::refusal : type, 0, kMaxControlBytes,
                 false);
  } catch (const Error& e) {
    fail(e.what());
  }
  payload.resize(h.length);
  read(payload.data(), payload.size(), deadline);
  if (h.type == FrameType::refusal)
    fail("refused this rank: " + std::string(payload.begin(), payload.end()));
  return payload;
}

void Stream::send(const void* data, std::size_t bytes, std::uint64_t seq, Deadline deadline) {
  send_frame({FrameType::data, seq, bytes}, data, deadline);
}

void Stream::receive(void* into, std::size_t bytes, std::uint64_t seq, Deadline deadline) {
  const FrameHeader h = read_header(deadline);
  try {
    expect_frame(h, FrameType::data, seq, bytes, true);
  } catch (const dtnn::Error& e) {
    throw dtnn::Error("tcp: " + peer() + ": " + e.what());
  }
  read(into, bytes, deadline);
}

}  // namespace dtnn_tcp
