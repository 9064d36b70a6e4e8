#pragma once

// Partition and sort transforms (spec "Partition Transforms"): their string form, which source
// types each accepts, result types, and the values they produce.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "iceberg/detail/literal.h"
#include "iceberg/detail/types.h"

namespace binberg::iceberg {

class Transform {
 public:
  // kUnknown keeps a transform this code does not know: readers must accept it and ignore it,
  // writers must not write data with it.
  enum class Kind { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid, kUnknown };

  static Transform identity() { return Transform(Kind::kIdentity); }
  static Transform bucket(std::int32_t buckets);
  static Transform truncate(std::int32_t width);
  static Transform year() { return Transform(Kind::kYear); }
  static Transform month() { return Transform(Kind::kMonth); }
  static Transform day() { return Transform(Kind::kDay); }
  static Transform hour() { return Transform(Kind::kHour); }
  static Transform always_null() { return Transform(Kind::kVoid); }
  // "identity", "bucket[16]", "truncate[4]", "year", ..., "void"; other names give kUnknown.
  // Throws Error for a known name with a bad parameter ("bucket[0]").
  static Transform parse(std::string_view text);

  Kind kind() const { return kind_; }
  bool is_known() const { return kind_ != Kind::kUnknown; }
  // N of bucket[N] or W of truncate[W]; 0 otherwise.
  std::int32_t parameter() const { return parameter_; }
  std::string to_string() const;

  bool can_transform(const Type& source) const;
  // Throws Error if the transform cannot apply to SOURCE.
  TypePtr result_type(const TypePtr& source) const;
  // The partition value of VALUE, a value of SOURCE (null gives null). Throws Error if the
  // transform cannot apply to SOURCE, VALUE does not fit SOURCE, or the result overflows its type.
  Literal apply(const Type& source, const Literal& value) const;

  friend bool operator==(const Transform&, const Transform&) = default;

 private:
  explicit Transform(Kind kind, std::int32_t parameter = 0, std::string unknown_text = {})
      : kind_(kind), parameter_(parameter), unknown_text_(std::move(unknown_text)) {}

  Kind kind_;
  std::int32_t parameter_;
  std::string unknown_text_;
};

}  // namespace binberg::iceberg
