#include "pairwise_masks.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"

namespace dtnn_secagg {

using dtnn::Error;

namespace {

struct FreeKey {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct FreeContext {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct FreeCipher {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, FreeKey>;
using ContextPtr = std::unique_ptr<EVP_PKEY_CTX, FreeContext>;
using CipherPtr = std::unique_ptr<EVP_CIPHER_CTX, FreeCipher>;

// OpenSSL's reason for the latest failure, and its queue emptied.
std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no reason given";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

[[noreturn]] void fail(const std::string& doing) {
  throw Error("secagg: " + doing + " failed (OpenSSL: " + openssl_reason() + ")");
}

void put_u32(std::vector<unsigned char>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

// The X25519 secret of `mine` and `theirs`; empty when theirs is a low-order point (OpenSSL refuses
// the all-zero secret it gives).
std::vector<unsigned char> shared_secret(EVP_PKEY* mine, const Key& theirs) {
  KeyPtr peer(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, theirs.data(), theirs.size()));
  if (!peer) fail("reading a public key");
  ContextPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, mine, nullptr));
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0) fail("starting X25519");
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

// The pair's key: HKDF-SHA256 of the secret, bound to both ranks and both public keys (lower rank
// first), so the two ranks derive the same key and no other pair does.
Key pair_key(const std::vector<unsigned char>& secret, int a, const Key& key_a, int b,
             const Key& key_b) {
  if (a > b) return pair_key(secret, b, key_b, a, key_a);
  static const unsigned char kSalt[] = "dtnn secure aggregation, pairwise mask key, v1";
  std::vector<unsigned char> info;
  put_u32(info, static_cast<std::uint32_t>(a));
  put_u32(info, static_cast<std::uint32_t>(b));
  info.insert(info.end(), key_a.begin(), key_a.end());
  info.insert(info.end(), key_b.begin(), key_b.end());
  ContextPtr ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr));
  Key key{};
  std::size_t length = key.size();
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_salt(ctx.get(), kSalt, sizeof kSalt - 1) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), secret.data(), static_cast<int>(secret.size())) <= 0 ||
      EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), info.data(), static_cast<int>(info.size())) <= 0 ||
      EVP_PKEY_derive(ctx.get(), key.data(), &length) <= 0 || length != key.size())
    fail("HKDF");
  return key;
}

}  // namespace

PairwiseMasks::PairwiseMasks(dtnn::Communicator& comm) : rank_(comm.rank()) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  pair_keys_.assign(ranks, Key{});
  KeyPtr mine(EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519"));
  if (!mine) fail("making an X25519 key pair");
  Key public_key{};
  std::size_t length = public_key.size();
  if (EVP_PKEY_get_raw_public_key(mine.get(), public_key.data(), &length) <= 0 ||
      length != public_key.size())
    fail("reading this rank's public key");
  // 32 bytes as 8 float32 words: the communicators move words bit for bit.
  std::vector<Key> keys(ranks);
  comm.allgather(public_key.data(), keys.data(), sizeof(Key) / sizeof(float), dtnn::DType::float32,
                 "secure aggregation: public keys");
  for (std::size_t j = 0; j < ranks; ++j) {
    if (static_cast<int>(j) == rank_) continue;
    const std::string who = "rank " + std::to_string(j) + "'s public key";
    for (std::size_t other = 0; other < j; ++other)
      if (keys[other] == keys[j])
        throw Error("secagg: " + who + " is rank " + std::to_string(other) +
                    "'s too (a relay that substitutes keys?); the pair's masks would not hide "
                    "its values");
    const auto secret = shared_secret(mine.get(), keys[j]);
    if (secret.empty())
      throw Error("secagg: " + who +
                  " gives no shared secret (a low-order point, which would make the pair's "
                  "mask known to all: a faulty peer, or a relay that alters keys)");
    pair_keys_[j] = pair_key(secret, rank_, public_key, static_cast<int>(j), keys[j]);
  }
}

PairwiseMasks::PairwiseMasks(int rank, std::vector<Key> pair_keys)
    : rank_(rank), pair_keys_(std::move(pair_keys)) {}

void mask_stream(const Key& key, std::uint64_t round, std::span<std::uint64_t> out) {
  // OpenSSL's ChaCha20 IV: a 32-bit block counter (from 0), then the 96-bit nonce (round, 0).
  unsigned char iv[16] = {};
  for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<unsigned char>(round >> (8 * i));
  CipherPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_chacha20(), nullptr, key.data(), iv) != 1)
    fail("starting ChaCha20");
  std::fill(out.begin(), out.end(), 0);
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  const std::size_t total = out.size_bytes();
  for (std::size_t at = 0; at < total;) {  // the keystream is the encryption of zeros, in place
    const int chunk = static_cast<int>(std::min<std::size_t>(total - at, std::size_t{1} << 30));
    int written = 0;
    if (EVP_EncryptUpdate(ctx.get(), bytes + at, &written, bytes + at, chunk) != 1 ||
        written != chunk)
      fail("ChaCha20");
    at += static_cast<std::size_t>(chunk);
  }
}

void PairwiseMasks::add_to(std::span<unsigned char> words, std::uint64_t round) const {
  DTNN_CHECK(words.size() % 8 == 0, "secagg: masks are added to whole words");
  const std::size_t n = words.size() / 8;
  for (int j = 0; j < size(); ++j) {
    if (j == rank_) continue;
    stream_.resize(n);
    mask_stream(pair_keys_[static_cast<std::size_t>(j)], round, stream_);
    const bool add = rank_ < j;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t w;
      std::memcpy(&w, words.data() + 8 * i, 8);
      w = add ? w + stream_[i] : w - stream_[i];  // modulo 2^64
      std::memcpy(words.data() + 8 * i, &w, 8);
    }
  }
}

}  // namespace dtnn_secagg
