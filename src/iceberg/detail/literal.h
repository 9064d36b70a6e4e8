#pragma once

// A single value of an Iceberg primitive type, as partition transforms consume and produce it.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "iceberg/detail/types.h"
#include "iceberg/detail/uuid.h"

namespace binberg::iceberg {

// 38 decimal digits need 127 bits; GCC's 128-bit integer holds every Iceberg decimal exactly.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// The unscaled value; the scale belongs to the decimal type, not to the value (spec Appendix B [2]).
struct Decimal {
  Int128 unscaled = 0;
  friend bool operator==(const Decimal&, const Decimal&) = default;
};

using Bytes = std::vector<std::uint8_t>;

// The alternative that holds a value of each type:
//   null                                 std::monostate
//   boolean                              bool
//   int; date (days from 1970-01-01)     std::int32_t
//   long; time (microseconds from midnight); timestamp, timestamptz (microseconds from
//   1970-01-01 00:00:00, UTC for timestamptz)                                      std::int64_t
//   float, double                        float, double
//   string (UTF-8)                       std::string
//   uuid                                 Uuid
//   fixed, binary                        Bytes
//   decimal                              Decimal
using Literal =
    std::variant<std::monostate, bool, std::int32_t, std::int64_t, float, double, std::string, Uuid, Bytes, Decimal>;

// The unscaled value as two's-complement big-endian bytes, as few as hold it (at least one): the
// decimal encoding of spec Appendix B (hashing) and Appendix D (binary single values).
Bytes min_big_endian_bytes(const Decimal& value);

// Throws Error naming WHAT unless VALUE is null or holds the alternative of TYPE (and a fixed value
// has the type's length).
void check_literal_type(const Type& type, const Literal& value, std::string_view what);

}  // namespace binberg::iceberg
