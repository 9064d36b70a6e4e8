#pragma once

// Binary single-value serialization (spec Appendix D): the form of column lower/upper bounds in
// manifests and of partition field summaries in manifest lists.

#include "iceberg/detail/literal.h"
#include "iceberg/detail/types.h"

namespace binberg::iceberg {

// VALUE (not null, holding TYPE's alternative) in Appendix D form: little-endian ints, longs,
// floats and doubles; UTF-8 bytes for strings; 16 big-endian bytes for uuids; the minimal
// two's-complement big-endian unscaled value for decimals. Throws Error for null or nested types.
Bytes to_single_value(const Type& type, const Literal& value);

// The inverse; throws Error naming WHAT when BYTES has the wrong length for TYPE.
Literal from_single_value(const Type& type, const Bytes& bytes, std::string_view what);

}  // namespace binberg::iceberg
