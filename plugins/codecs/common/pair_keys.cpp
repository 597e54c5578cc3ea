#include "pair_keys.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <cstdint>
#include <memory>

#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"

namespace dtnn_codecs {

using dtnn::Error;

namespace {

struct FreeKey {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct FreeContext {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, FreeKey>;
using ContextPtr = std::unique_ptr<EVP_PKEY_CTX, FreeContext>;

void put_u32(std::vector<unsigned char>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

// The X25519 secret of `mine` and `theirs`; empty when theirs is a low-order point (OpenSSL refuses
// the all-zero secret it gives).
std::vector<unsigned char> shared_secret(EVP_PKEY* mine, const Key& theirs,
                                         const std::string& who) {
  KeyPtr peer(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, theirs.data(), theirs.size()));
  if (!peer) throw Error(who + ": reading a public key failed (OpenSSL: " + openssl_reason() + ")");
  ContextPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, mine, nullptr));
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0)
    throw Error(who + ": starting X25519 failed (OpenSSL: " + openssl_reason() + ")");
  std::size_t length = 0;
  if (EVP_PKEY_derive_set_peer(ctx.get(), peer.get()) <= 0 ||
      EVP_PKEY_derive(ctx.get(), nullptr, &length) <= 0) {
    ERR_clear_error();
    return {};
  }
  std::vector<unsigned char> secret(length);
  if (EVP_PKEY_derive(ctx.get(), secret.data(), &length) <= 0) {
    ERR_clear_error();
    return {};
  }
  secret.resize(length);
  return secret;
}

// The pair's key: HKDF-SHA256 of the secret, salted by the purpose, bound to both ranks and both
// public keys (lower rank first).
Key pair_key(const std::vector<unsigned char>& secret, int a, const Key& key_a, int b,
             const Key& key_b, const std::string& who, const std::string& salt) {
  if (a > b) return pair_key(secret, b, key_b, a, key_a, who, salt);
  std::vector<unsigned char> info;
  put_u32(info, static_cast<std::uint32_t>(a));
  put_u32(info, static_cast<std::uint32_t>(b));
  info.insert(info.end(), key_a.begin(), key_a.end());
  info.insert(info.end(), key_b.begin(), key_b.end());
  ContextPtr ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr));
  Key key{};
  std::size_t length = key.size();
  const auto* s = reinterpret_cast<const unsigned char*>(salt.data());
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_salt(ctx.get(), s, static_cast<int>(salt.size())) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), secret.data(), static_cast<int>(secret.size())) <= 0 ||
      EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), info.data(), static_cast<int>(info.size())) <= 0 ||
      EVP_PKEY_derive(ctx.get(), key.data(), &length) <= 0 || length != key.size())
    throw Error(who + ": HKDF failed (OpenSSL: " + openssl_reason() + ")");
  return key;
}

}  // namespace

std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no reason given";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

std::vector<Key> agree_pair_keys(dtnn::Communicator& comm, const std::string& who,
                                 const std::string& salt) {
  const int rank = comm.rank();
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<Key> pair_keys(ranks, Key{});
  KeyPtr mine(EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519"));
  if (!mine)
    throw Error(who + ": making an X25519 key pair failed (OpenSSL: " + openssl_reason() + ")");
  Key public_key{};
  std::size_t length = public_key.size();
  if (EVP_PKEY_get_raw_public_key(mine.get(), public_key.data(), &length) <= 0 ||
      length != public_key.size())
    throw Error(who + ": reading this rank's public key failed (OpenSSL: " + openssl_reason() +
                ")");
  // 32 bytes as 8 float32 words: the communicators move words bit for bit.
  std::vector<Key> keys(ranks);
  comm.allgather(public_key.data(), keys.data(), sizeof(Key) / sizeof(float), dtnn::DType::float32,
                 who + ": public keys");
  for (std::size_t j = 0; j < ranks; ++j) {
    if (static_cast<int>(j) == rank) continue;
    const std::string whose = "rank " + std::to_string(j) + "'s public key";
    for (std::size_t other = 0; other < j; ++other)
      if (keys[other] == keys[j])
        throw Error(who + ": " + whose + " is rank " + std::to_string(other) +
                    "'s too (a relay that substitutes keys?); the pair's key would not be secret");
    const auto secret = shared_secret(mine.get(), keys[j], who);
    if (secret.empty())
      throw Error(who + ": " + whose +
                  " gives no shared secret (a low-order point, which would make the pair's "
                  "key known to all: a faulty peer, or a relay that alters keys)");
    pair_keys[j] = pair_key(secret, rank, public_key, static_cast<int>(j), keys[j], who, salt);
  }
  return pair_keys;
}

}  // namespace dtnn_codecs
