// TLS for the tcp communicator (OpenSSL): TLS 1.3 with mutual authentication. Every rank presents
// a certificate that the run's certificate authority signed, and accepts only peers whose
// certificate it signed; a joining rank also checks that rank 0's certificate names the host it
// dialled.
#pragma once
#include <memory>
#include <string>

#include "launch_settings.hpp"

using SSL_CTX = struct ssl_ctx_st;

namespace dtnn_tcp {

using dtnn_net::TlsFiles;

class TlsContext {
 public:
  // files: all three (launch_settings.hpp checked). `where` names the parameters in errors
  // ("exp.json: parallel.communicator").
  TlsContext(const TlsFiles& files, bool server, const std::string& where);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* get() const { return ctx_; }
  bool server() const { return server_; }

 private:
  SSL_CTX* ctx_ = nullptr;
  bool server_;
};

// OpenSSL's queued errors as one line ("" when none), emptying the queue.
std::string openssl_errors();

}  // namespace dtnn_tcp
