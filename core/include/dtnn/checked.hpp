// Checked arithmetic and number parsing for sizes and values that come from files, configs and the
// command line. A header claiming 2^40 x 2^40 elements, or a field reading "four", must become an
// error naming the file, never a wrapped size that a later allocation or copy trusts.
#pragma once
#include <charconv>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>

namespace dtnn {

// a * b, or nothing when it overflows int64 or either factor is negative.
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nothing when it overflows int64 or either term is negative.
inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of dims (1 for none), or nothing when a dimension is negative or it overflows.
inline std::optional<std::int64_t> checked_product(std::span<const std::int64_t> dims) {
  std::optional<std::int64_t> n = 1;
  for (std::int64_t d : dims)
    if (!(n = checked_mul(*n, d))) return std::nullopt;
  return n;
}

// The whole of text (surrounding spaces allowed) as a decimal integer, or nothing: no exceptions,
// no partial parses ("12abc"), no silent wrap-around.
inline std::optional<std::int64_t> parse_int64(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// The whole of text as a decimal floating-point number, or nothing.
inline std::optional<double> parse_double(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

inline std::optional<std::uint64_t> parse_uint64(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

}  // namespace dtnn
