#include "dtnn/error.hpp"

namespace dtnn {
Error::Error(const std::string& what) : std::runtime_error(what) {}
Error::~Error() = default;
}  // namespace dtnn
