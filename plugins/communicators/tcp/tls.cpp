#include "tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "dtnn/error.hpp"

namespace dtnn_tcp {

using dtnn::Error;

std::string openssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    out += (out.empty() ? "" : "; ") + std::string(text);
  }
  return out;
}

TlsContext::TlsContext(const TlsFiles& files, bool server, const std::string& where)
    : server_(server) {
  ERR_clear_error();
  ctx_ = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (!ctx_) throw Error(where + ": cannot make a TLS context (" + openssl_errors() + ")");
  auto fail = [&](const char* key, const std::string& file, const char* what) {
    const std::string why = openssl_errors();
    SSL_CTX_free(ctx_);
    ctx_ = nullptr;
    throw Error(where + "." + key + ": " + file + ": " + what + " (" + why + ")");
  };
  SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION);
  if (SSL_CTX_load_verify_locations(ctx_, files.ca.c_str(), nullptr) != 1)
    fail("tls_ca", files.ca, "cannot read the certificate authority (PEM expected)");
  if (SSL_CTX_use_certificate_chain_file(ctx_, files.cert.c_str()) != 1)
    fail("tls_cert", files.cert, "cannot read the certificate (PEM expected)");
  if (SSL_CTX_use_PrivateKey_file(ctx_, files.key.c_str(), SSL_FILETYPE_PEM) != 1)
    fail("tls_key", files.key, "cannot read the private key (PEM expected)");
  if (SSL_CTX_check_private_key(ctx_) != 1)
    fail("tls_key", files.key, "is not the key of tls_cert's certificate");
  // Both sides present a certificate and check the other's against the authority.
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_mode(ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_num_tickets(ctx_, 0);  // no session resumption: every connection authenticates
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

}  // namespace dtnn_tcp
