#include "dtnn/npz.hpp"

#include <zlib.h>

#include <cstring>
#include <regex>
#include <sstream>

#include "dtnn/checked.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/memory.hpp"

namespace dtnn {

namespace fs = std::filesystem;

std::int64_t NpyArray::numel() const {
  const auto n = checked_product(shape);
  if (!n) throw Error("array of shape " + shape_str() + " has more than 2^63 elements");
  return *n;
}

double NpyArray::value(std::int64_t i) const {
  const std::byte* p = data.data() + i * item_size;
  auto read = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (kind == 'f') return item_size == 4 ? read(float()) : read(double());
  if (kind == 'u')
    return item_size == 1   ? read(std::uint8_t())
           : item_size == 2 ? read(std::uint16_t())
           : item_size == 4 ? read(std::uint32_t())
                            : read(std::uint64_t());
  return item_size == 1   ? read(std::int8_t())
         : item_size == 2 ? read(std::int16_t())
         : item_size == 4 ? read(std::int32_t())
                          : read(std::int64_t());
}

std::string NpyArray::shape_str() const {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50,
                        kEndOfCentral = 0x06054b50;

std::uint32_t le(const std::uint8_t* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
void put(std::string& out, std::uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// .npy: magic "\x93NUMPY", version, header length, a Python dict literal, the data.
NpyArray parse_npy(const std::uint8_t* p, std::size_t size, const std::string& where) {
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0)
    throw Error(where + ": not a .npy array (no \\x93NUMPY magic at byte 0)");
  const int major = p[6];
  if (major != 1 && size < 12) throw Error(where + ": truncated .npy header");
  const std::size_t header_len = major == 1 ? le(p + 8, 2) : le(p + 8, 4);
  const std::size_t start = major == 1 ? 10 : 12;
  if (start + header_len > size) throw Error(where + ": truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(p + start), header_len);
  std::smatch m;
  NpyArray a;
  if (std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'[<>|=]?([OUS])\d*')")))
    throw Error(where + ": an array of " +
                (m[1] == "O" ? std::string("Python objects (dtype object, a pickle)")
                             : std::string("strings")) +
                ": dtnn reads arrays of numbers only (PyDTNN 3.x's model-state files keep their "
                "layers as pickled objects; docs/config.md says what dtnn reads)");
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([<>|=]?)([fiu])(\d+)')"))) {
    if (std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']{0,40})')")))
      throw Error(where + ": an array of dtype '" + m[1].str() +
                  "': expected float32, float64, or integers of 1 to 8 bytes ('<f4', '<f8', "
                  "'<i8', '|u1', ...)");
    throw Error(where + ": .npy header without 'descr': " + header.substr(0, 200));
  }
  const std::string kind = m[2].str() + m[3].str();
  if (m[1] == ">") throw Error(where + ": big-endian arrays are not supported");
  a.kind = m[2].str()[0];
  const auto item_size = parse_int64(m[3].str());
  a.item_size = item_size && *item_size <= 8 ? static_cast<int>(*item_size) : 0;
  if (kind == "f4")
    a.dtype = DType::float32;
  else if (kind == "f8")
    a.dtype = DType::float64;
  else if ((a.kind != 'i' && a.kind != 'u') ||
           (a.item_size != 1 && a.item_size != 2 && a.item_size != 4 && a.item_size != 8))
    throw Error(where + ": array of " + m[0].str() +
                ": expected float32, float64, or integers of 1 to 8 bytes");
  if (std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*True)")))
    throw Error(where + ": Fortran-order arrays are not supported");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    throw Error(where + ": .npy header without 'shape': " + header.substr(0, 200));
  std::stringstream dims(m[1].str());
  for (std::string d; std::getline(dims, d, ',');) {
    d.erase(0, d.find_first_not_of(" "));
    d.erase(d.find_last_not_of(" ") + 1);
    if (d.empty()) continue;
    const auto dim = parse_int64(d);
    if (!dim || *dim < 0)
      throw Error(where + ": .npy header's shape (" + m[1].str() + ") has '" + d +
                  "': expected a dimension >= 0");
    a.shape.push_back(*dim);
  }
  const std::size_t held = size - start - header_len;
  const auto numel = checked_product(a.shape);
  const auto bytes_or = numel ? checked_mul(*numel, a.item_size) : std::nullopt;
  if (!bytes_or || static_cast<std::size_t>(*bytes_or) != held)
    throw Error(where + ": shape " + a.shape_str() + " needs " +
                (bytes_or ? std::to_string(*bytes_or) : std::string("more than 2^63")) +
                " data bytes, the array holds " + std::to_string(held));
  const auto bytes = static_cast<std::size_t>(*bytes_or);
  const auto* data = reinterpret_cast<const std::byte*>(p + start + header_len);
  a.data.assign(data, data + bytes);
  return a;
}

std::string npy_bytes(const NpyArray& a) {
  std::string dict = std::string("{'descr': '") + (a.dtype == DType::float32 ? "<f4" : "<f8") +
                     "', 'fortran_order': False, 'shape': " + a.shape_str() + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary, ending with a newline.
  const std::size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  put(out, static_cast<std::uint32_t>(dict.size()), 2);
  out += dict;
  out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  return out;
}

std::string inflate_raw(const std::uint8_t* p, std::size_t size, std::size_t expected,
                        const std::string& where) {
  std::string out(expected, '\0');
  z_stream s{};
  if (inflateInit2(&s, -MAX_WBITS) != Z_OK) throw Error(where + ": zlib initialisation failed");
  s.next_in = const_cast<Bytef*>(p);
  s.avail_in = static_cast<uInt>(size);
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(expected);
  const int rc = inflate(&s, Z_FINISH);
  inflateEnd(&s);
  if (rc != Z_STREAM_END || s.total_out != expected)
    throw Error(where + ": corrupt deflate data (" + std::to_string(s.total_out) + " of " +
                std::to_string(expected) + " bytes inflated)");
  return out;
}

}  // namespace

std::vector<std::pair<std::string, NpyArray>> read_npz(const fs::path& file) {
  return read_npz_bytes(read_file(file), file.string());
}

std::vector<std::pair<std::string, NpyArray>> read_npz_bytes(const std::string& bytes,
                                                             const std::string& file) {
  const auto* b = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t size = bytes.size();
  // Every length and offset below comes from the file: each is checked against its size before
  // anything is read at it (sizes are at most 2^32 + 2^16, so these sums cannot wrap).
  auto fits = [&](std::size_t at, std::size_t length) { return at <= size && length <= size - at; };
  // The end-of-central-directory record: the last 22 bytes, or before a trailing comment.
  std::size_t eocd = std::string::npos;
  for (std::size_t at = size >= 22 ? size - 22 : 0; size >= 22; --at) {
    if (le(b + at, 4) == kEndOfCentral) {
      eocd = at;
      break;
    }
    if (at == 0 || size - at > 22 + 65535) break;
  }
  if (eocd == std::string::npos)
    throw Error(file + ": not a zip (.npz) archive: no end-of-central-directory record " +
                "(truncated, or not an .npz)");
  const std::size_t entries = le(b + eocd + 10, 2);
  std::size_t at = le(b + eocd + 16, 4);
  std::vector<std::pair<std::string, NpyArray>> arrays;
  for (std::size_t e = 0; e < entries; ++e) {
    if (!fits(at, 46) || le(b + at, 4) != kCentralHeader)
      throw Error(file + ": bad central directory entry at byte " + std::to_string(at));
    const std::uint32_t method = le(b + at + 10, 2), crc = le(b + at + 16, 4);
    const std::size_t packed = le(b + at + 20, 4), unpacked = le(b + at + 24, 4);
    const std::size_t name_len = le(b + at + 28, 2), extra_len = le(b + at + 30, 2),
                      comment_len = le(b + at + 32, 2), local = le(b + at + 42, 4);
    if (!fits(at + 46, name_len + extra_len + comment_len))
      throw Error(file + ": central directory entry at byte " + std::to_string(at) +
                  " claims a name, extra field and comment of " +
                  std::to_string(name_len + extra_len + comment_len) +
                  " bytes, which runs past the end of the " + std::to_string(size) + "-byte file");
    const std::string name(bytes.data() + at + 46, name_len);
    at += 46 + name_len + extra_len + comment_len;
    const std::string where = file + ": " + name;
    if (!fits(local, 30) || le(b + local, 4) != kLocalHeader)
      throw Error(where + ": bad local header at byte " + std::to_string(local));
    const std::size_t data_at = local + 30 + le(b + local + 26, 2) + le(b + local + 28, 2);
    if (!fits(data_at, packed))
      throw Error(where + ": truncated: " + std::to_string(packed) + " bytes from byte " +
                  std::to_string(data_at) + ", the file holds " + std::to_string(size));
    std::string content;
    if (method == 0) {
      content.assign(bytes.data() + data_at, packed);
    } else if (method == 8) {
      // Deflate expands at most 1032:1; a larger claim is a corrupt (or hostile) header.
      if (unpacked > packed * 1032 + 1024)
        throw Error(where + ": claims " + std::to_string(unpacked) + " bytes inflated from " +
                    std::to_string(packed) + ", more than deflate can give");
      check_fits_in_memory(unpacked, where + ": inflating");
      content = inflate_raw(b + data_at, packed, unpacked, where);
    } else {
      throw Error(where + ": compression method " + std::to_string(method) +
                  " (expected stored or deflate)");
    }
    if (crc32(0, reinterpret_cast<const Bytef*>(content.data()),
              static_cast<uInt>(content.size())) != crc)
      throw Error(where + ": CRC-32 mismatch (corrupt archive)");
    std::string key =
        name.size() > 4 && name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
    arrays.emplace_back(key, parse_npy(reinterpret_cast<const std::uint8_t*>(content.data()),
                                       content.size(), where));
  }
  return arrays;
}

void write_npz(const fs::path& file, const std::vector<std::pair<std::string, NpyArray>>& arrays) {
  std::string out, central;
  for (const auto& [key, array] : arrays) {
    const std::string name = key + ".npy", data = npy_bytes(array);
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    const auto offset = static_cast<std::uint32_t>(out.size());
    // Local header: version 2.0, no flags, stored, no date.
    put(out, kLocalHeader, 4);
    put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0x21, 2);
    put(out, crc, 4), put(out, static_cast<std::uint32_t>(data.size()), 4);
    put(out, static_cast<std::uint32_t>(data.size()), 4);
    put(out, static_cast<std::uint32_t>(name.size()), 2), put(out, 0, 2);
    out += name;
    out += data;
    put(central, kCentralHeader, 4);
    put(central, 20, 2), put(central, 20, 2), put(central, 0, 2), put(central, 0, 2);
    put(central, 0, 2), put(central, 0x21, 2);
    put(central, crc, 4), put(central, static_cast<std::uint32_t>(data.size()), 4);
    put(central, static_cast<std::uint32_t>(data.size()), 4);
    put(central, static_cast<std::uint32_t>(name.size()), 2);
    put(central, 0, 2), put(central, 0, 2), put(central, 0, 2), put(central, 0, 2);
    put(central, 0, 4), put(central, offset, 4);
    central += name;
    if (out.size() > 0xffffffffu)
      throw Error(file.string() + ": over 4 GiB (zip64 is not supported)");
  }
  const auto central_at = static_cast<std::uint32_t>(out.size());
  out += central;
  put(out, kEndOfCentral, 4);
  put(out, 0, 2), put(out, 0, 2);
  put(out, static_cast<std::uint32_t>(arrays.size()), 2);
  put(out, static_cast<std::uint32_t>(arrays.size()), 2);
  put(out, static_cast<std::uint32_t>(central.size()), 4), put(out, central_at, 4), put(out, 0, 2);
  write_file_atomically(file, out);
}

}  // namespace dtnn
