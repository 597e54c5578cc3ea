#include "dtnn/params.hpp"

#include <nlohmann/json.hpp>

#include "dtnn/error.hpp"

namespace dtnn {

using Json = nlohmann::json;

namespace {
std::string type_name(const Json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  return std::string("a ") + v.type_name();
}
}  // namespace

Params::Params() : json_(std::make_shared<const Json>(Json::object())) {}
Params::Params(const Json& object, std::string where)
    : json_(std::make_shared<const Json>(object)), where_(std::move(where)) {
  if (!json_->is_object()) throw Error(where_ + ": expected an object, got " + type_name(*json_));
}
Params::~Params() = default;
Params::Params(const Params&) = default;
Params& Params::operator=(const Params&) = default;

const Json& Params::json() const { return *json_; }
std::string Params::dump() const { return json_->dump(); }

std::string Params::key_path(std::string_view key) const {
  // "exp.Json: optimizer" + "beta1" -> "exp.Json: optimizer.beta1"; "exp.Json" -> "exp.Json: beta1"
  if (where_.empty()) return std::string(key);
  return where_ + (where_.find(": ") == std::string::npos ? ": " : ".") + std::string(key);
}

void Params::fail(std::string_view key, const std::string& expected) const {
  std::string got = has(key) ? ", got " + json_->at(std::string(key)).dump() : " (missing)";
  throw Error(key_path(key) + ": expected " + expected + got);
}

bool Params::has(std::string_view key) const { return json_->contains(std::string(key)); }
bool Params::is_null(std::string_view key) const {
  auto it = json_->find(std::string(key));
  return it != json_->end() && it->is_null();
}

namespace {
const Json& get(const Params& p, std::string_view key, const Json& root) {
  auto it = root.find(std::string(key));
  if (it == root.end()) p.fail(key, "a value");
  return *it;
}
}  // namespace

std::int64_t Params::get_int(std::string_view key) const {
  const Json& v = get(*this, key, *json_);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float() &&
      v.get<double>() == static_cast<double>(static_cast<std::int64_t>(v.get<double>())))
    return static_cast<std::int64_t>(v.get<double>());
  fail(key, "an integer");
}

double Params::get_double(std::string_view key) const {
  const Json& v = get(*this, key, *json_);
  if (!v.is_number()) fail(key, "a number");
  return v.get<double>();
}

bool Params::get_bool(std::string_view key) const {
  const Json& v = get(*this, key, *json_);
  if (!v.is_boolean()) fail(key, "true or false");
  return v.get<bool>();
}

std::string Params::get_string(std::string_view key) const {
  const Json& v = get(*this, key, *json_);
  if (!v.is_string()) fail(key, "a string");
  return v.get<std::string>();
}

std::vector<std::int64_t> Params::get_ints(std::string_view key) const {
  const Json& v = get(*this, key, *json_);
  std::vector<std::int64_t> out;
  if (v.is_number_integer()) return {v.get<std::int64_t>()};
  if (!v.is_array()) fail(key, "an integer or a list of integers");
  for (const auto& e : v) {
    if (!e.is_number_integer()) fail(key, "an integer or a list of integers");
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

std::pair<std::int64_t, std::int64_t> Params::get_pair(std::string_view key,
                                                       std::int64_t min) const {
  // A pair is a window's size, stride, padding or dilation in pixels: bounded, so that no output
  // shape computed from it overflows (a padding of 2^40 asked for 2^82 output pixels).
  constexpr std::int64_t kMaxPixels = std::int64_t{1} << 20;
  const std::vector<std::int64_t> v = get_ints(key);
  if (v.empty() || v.size() > 2 || v[0] < min || v.back() < min || v[0] > kMaxPixels ||
      v.back() > kMaxPixels)
    fail(key, "one or two integers >= " + std::to_string(min) + " (at most " +
                  std::to_string(kMaxPixels) + ")");
  return {v[0], v.back()};
}

std::vector<std::string> Params::get_strings(std::string_view key) const {
  const Json& v = get(*this, key, *json_);
  std::vector<std::string> out;
  if (v.is_string()) return {v.get<std::string>()};
  if (!v.is_array()) fail(key, "a string or a list of strings");
  for (const auto& e : v) {
    if (!e.is_string()) fail(key, "a string or a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Params Params::get_object(std::string_view key) const {
  const Json& v = get(*this, key, *json_);
  if (!v.is_object()) fail(key, "an object");
  return Params(v, key_path(key));
}

}  // namespace dtnn
