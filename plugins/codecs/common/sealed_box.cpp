#include "sealed_box.hpp"

#include <openssl/evp.h>

#include <memory>

#include "dtnn/error.hpp"

namespace dtnn_codecs {

using dtnn::Error;

namespace {

constexpr int kTag = 16;

struct FreeCipher {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherPtr = std::unique_ptr<EVP_CIPHER_CTX, FreeCipher>;

CipherPtr start(const Key& key, bool encrypt, const std::string& what) {
  const unsigned char nonce[12] = {};  // one message per key
  CipherPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_CipherInit_ex(ctx.get(), EVP_chacha20_poly1305(), nullptr, key.data(), nonce,
                                encrypt ? 1 : 0) != 1)
    throw Error(what + ": starting ChaCha20-Poly1305 failed (OpenSSL: " + openssl_reason() + ")");
  return ctx;
}

}  // namespace

std::vector<unsigned char> seal(const Key& key, std::span<const unsigned char> message) {
  CipherPtr ctx = start(key, true, "sealing a message");
  std::vector<unsigned char> box(message.size() + kTag);
  int written = 0, last = 0;
  if (EVP_CipherUpdate(ctx.get(), box.data(), &written, message.data(),
                       static_cast<int>(message.size())) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), box.data() + written, &last) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, kTag, box.data() + message.size()) != 1)
    throw Error("sealing a message failed (OpenSSL: " + openssl_reason() + ")");
  return box;
}

std::vector<unsigned char> open(const Key& key, std::span<const unsigned char> box,
                                const std::string& what) {
  if (box.size() < kTag)
    throw Error(what + ": " + std::to_string(box.size()) + " bytes, shorter than its tag");
  const std::size_t n = box.size() - kTag;
  CipherPtr ctx = start(key, false, what);
  std::vector<unsigned char> message(n);
  std::vector<unsigned char> tag(box.end() - kTag, box.end());
  int written = 0, last = 0;
  if (EVP_CipherUpdate(ctx.get(), message.data(), &written, box.data(), static_cast<int>(n)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, kTag, tag.data()) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), message.data() + written, &last) != 1) {
    openssl_reason();  // empties the queue
    throw Error(what + ": fails authentication (altered on the way, or sealed for another rank)");
  }
  return message;
}

}  // namespace dtnn_codecs
