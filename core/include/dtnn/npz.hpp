// NumPy .npy arrays and .npz archives (a zip of .npy files), read and written without Python.
// The zip handling is dtnn's own: stored entries on writing (np.load reads them as np.savez's),
// stored or deflated entries on reading (np.savez_compressed's, inflated with zlib, already a
// dependency), CRC-32 checked; no zip64 (archives under 4 GiB). Debian's libzip would do the same
// for one more build and run dependency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

// One array, little-endian, C order: float32 or float64 (dtype), or, read from others' files,
// signed or unsigned integers of 1 to 8 bytes (dataset images and labels).
struct DTNN_CORE_EXPORT NpyArray {
  DType dtype = DType::float32;  // for kind 'f'
  std::vector<std::int64_t> shape;
  std::vector<std::byte> data;
  char kind = 'f';    // 'f' float, 'i' signed integer, 'u' unsigned integer
  int item_size = 4;  // bytes per element

  std::int64_t numel() const;
  std::string shape_str() const;       // "(3, 3, 1, 4)"
  double value(std::int64_t i) const;  // element i, whatever its type
};

// The arrays of an .npz file by name (the member name without ".npy"), in archive order. Errors
// name the file, the member and the byte offset.
DTNN_CORE_EXPORT std::vector<std::pair<std::string, NpyArray>> read_npz(
    const std::filesystem::path& file);
// The same from the file's bytes; `where` names it in errors.
DTNN_CORE_EXPORT std::vector<std::pair<std::string, NpyArray>> read_npz_bytes(
    const std::string& bytes, const std::string& where);
// Writes an .npz atomically (a temporary file, then rename): an existing file is replaced only
// by a complete one.
DTNN_CORE_EXPORT void write_npz(const std::filesystem::path& file,
                                const std::vector<std::pair<std::string, NpyArray>>& arrays);

}  // namespace dtnn
