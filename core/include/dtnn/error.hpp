// dtnn::Error: the one exception type that may cross the plugin boundary.
// Every message names the file/key/offset at fault and what was expected.
#pragma once
#include <stdexcept>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what);
  ~Error() override;
};

// Internal invariant check that stays on in release builds (tests run release code).
#define DTNN_CHECK(cond, msg)                                                             \
  do {                                                                                    \
    if (!(cond))                                                                          \
      throw ::dtnn::Error(std::string("internal check failed: ") + #cond + ": " + (msg)); \
  } while (0)

}  // namespace dtnn
