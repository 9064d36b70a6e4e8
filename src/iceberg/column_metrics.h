#pragma once

// Per-column metrics of a data or delete file as manifests record them (spec "Manifests",
// data_file fields 108-128): value, null and NaN counts and lower/upper bounds. Readers prune
// files with the bounds, so a bound must never exclude a value the file holds: string and binary
// bounds are truncated (default 16 characters or bytes, as the reference implementation does), the
// lower bound to a prefix and the upper bound to a prefix whose last character is incremented (or
// omitted when no such prefix exists).

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "iceberg/arrow_rows.h"

namespace binberg::iceberg {

inline constexpr std::size_t kDefaultBoundTruncateLength = 16;

struct ColumnMetrics {
  std::map<std::int32_t, std::int64_t> value_counts;
  std::map<std::int32_t, std::int64_t> null_value_counts;
  std::map<std::int32_t, std::int64_t> nan_value_counts;  // float and double columns only
  std::map<std::int32_t, Bytes> lower_bounds;             // Appendix D single-value form
  std::map<std::int32_t, Bytes> upper_bounds;
};

ColumnMetrics compute_column_metrics(const Schema& schema, RowView rows,
                                     std::size_t truncate_length = kDefaultBoundTruncateLength);

// -1, 0 or 1 as A sorts before, with or after B in TYPE's order (Iceberg's: numeric for numbers
// and decimals, unsigned lexicographic bytes for strings, binary, fixed and uuid). Neither may be
// null; NaN is not ordered and must not be passed.
int compare_literals(const Type& type, const Literal& a, const Literal& b);

}  // namespace binberg::iceberg
