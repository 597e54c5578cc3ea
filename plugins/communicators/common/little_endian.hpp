// The wire formats' integers: little-endian, whatever the machine's order.
#pragma once
#include <cstdint>

namespace dtnn_net {

// The low `bytes` bytes of value at `at`, least significant first.
inline void put_le(unsigned char* at, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) at[i] = static_cast<unsigned char>(value >> (8 * i));
}

// The `bytes`-byte integer at `at`, least significant byte first.
inline std::uint64_t get_le(const unsigned char* at, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(at[i]) << (8 * i);
  return value;
}

}  // namespace dtnn_net
