#pragma once

// A generic Avro datum. Values carry no schema: the schema given to encode/decode says how to read
// them (bytes and fixed are both Bytes; logical types hold their underlying representation).

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "avro/schema.h"

namespace binberg::avro {

class Value;

using Bytes = std::vector<std::uint8_t>;
using Array = std::vector<Value>;
using Map = std::map<std::string, Value, std::less<>>;

struct Enum {
  std::size_t index = 0;
  bool operator==(const Enum&) const = default;
};

struct Record {
  std::vector<Value> fields;  // in schema field order
  bool operator==(const Record&) const = default;

  // A record of FIELDS, moved in: a braced list would copy each one, nested values included.
  template <typename... Fields>
  static Record of(Fields&&... fields);
};

// A union value: the chosen branch of the union schema and the value of that branch.
class Union {
 public:
  Union(std::size_t branch, Value value);
  Union(const Union& other);
  Union& operator=(const Union& other);
  Union(Union&&) noexcept = default;
  Union& operator=(Union&&) noexcept = default;
  ~Union();

  std::size_t branch() const { return branch_; }
  const Value& value() const { return *value_; }
  Value& value() { return *value_; }
  bool operator==(const Union& other) const;

 private:
  std::size_t branch_;
  std::unique_ptr<Value> value_;
};

namespace detail {
template <typename T, typename Variant>
struct IsAlternative : std::false_type {};
template <typename T, typename... Alternatives>
struct IsAlternative<T, std::variant<Alternatives...>> : std::disjunction<std::is_same<T, Alternatives>...> {};
}  // namespace detail

template <typename T, typename Variant>
concept AlternativeOf = detail::IsAlternative<std::remove_cvref_t<T>, Variant>::value;

class Value {
 public:
  using Data = std::variant<std::monostate, bool, std::int32_t, std::int64_t, float, double, std::string, Bytes, Enum,
                            Array, Map, Record, Union>;

  Value() = default;  // null
  // Only the exact alternative types convert, so an int never silently becomes a long or a bool.
  template <AlternativeOf<Data> T>
  Value(T&& value) : data_(std::forward<T>(value)) {}    // NOLINT(google-explicit-constructor)
  Value(const char* text) : data_(std::string(text)) {}  // NOLINT(google-explicit-constructor)

  const Data& data() const { return data_; }
  bool is_null() const { return std::holds_alternative<std::monostate>(data_); }
  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(data_);
  }
  // Throw Error naming both kinds when the value holds another alternative.
  template <typename T>
  const T& as() const {
    if (const T* held = std::get_if<T>(&data_)) return *held;
    throw_wrong_kind(index_of<T>());
  }
  template <typename T>
  T& as() {
    if (T* held = std::get_if<T>(&data_)) return *held;
    throw_wrong_kind(index_of<T>());
  }

  // "null", "int", "record", ...
  std::string_view kind() const { return kind_name(data_.index()); }

  friend bool operator==(const Value& a, const Value& b) { return a.data_ == b.data_; }

 private:
  // Position of T among the alternatives of Data; variant_size when T is none of them.
  template <typename T>
  static constexpr std::size_t index_of() {
    return []<typename... Alternatives>(std::variant<Alternatives...>*) {
      constexpr bool kMatches[] = {std::is_same_v<T, Alternatives>...};
      std::size_t index = 0;
      while (index < sizeof...(Alternatives) && !kMatches[index]) ++index;
      return index;
    }(static_cast<Data*>(nullptr));
  }
  static std::string_view kind_name(std::size_t index);
  [[noreturn]] void throw_wrong_kind(std::size_t wanted_index) const;

  Data data_;
};

inline Union::Union(std::size_t branch, Value value)
    : branch_(branch), value_(std::make_unique<Value>(std::move(value))) {}
inline Union::Union(const Union& other) : branch_(other.branch_), value_(std::make_unique<Value>(*other.value_)) {}
inline Union& Union::operator=(const Union& other) {
  if (this != &other) *this = Union(other);
  return *this;
}
inline Union::~Union() = default;

template <typename... Fields>
Record Record::of(Fields&&... fields) {
  Record record;
  record.fields.reserve(sizeof...(fields));
  (record.fields.emplace_back(std::forward<Fields>(fields)), ...);
  return record;
}
inline bool Union::operator==(const Union& other) const { return branch_ == other.branch_ && *value_ == *other.value_; }

// Converts a JSON default value (as written in a schema) to a value of `schema`; throws Error on mismatch.
// Bytes and fixed defaults are strings whose code points 0-255 are the bytes; a union default is for its first branch.
Value value_from_json(const Node& schema, const Json& json);
// The JSON a schema writes as a field's default for VALUE, a null or a primitive (bytes as a
// string of code points 0-255, as value_from_json reads them); throws Error for other kinds.
Json default_json(const Value& value);

}  // namespace binberg::avro
