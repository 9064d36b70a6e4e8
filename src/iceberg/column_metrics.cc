#include "iceberg/column_metrics.h"

#include <cmath>
#include <optional>

#include "core/error.h"
#include "iceberg/single_value.h"

namespace binberg::iceberg {
namespace {

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

bool is_nan(const Literal& value) {
  if (const auto* f = std::get_if<float>(&value)) return std::isnan(*f);
  if (const auto* d = std::get_if<double>(&value)) return std::isnan(*d);
  return false;
}

// Length in bytes of the first MAX_CHARS UTF-8 characters of TEXT.
std::size_t utf8_prefix_bytes(const std::string& text, std::size_t max_chars) {
  std::size_t bytes = 0;
  for (std::size_t chars = 0; bytes < text.size() && chars < max_chars; ++chars) {
    ++bytes;
    while (bytes < text.size() && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) ++bytes;
  }
  return bytes;
}

// Decodes the UTF-8 character starting at TEXT[START] (valid UTF-8 assumed: Arrow validated it).
char32_t decode_utf8(const std::string& text, std::size_t start, std::size_t end) {
  const auto lead = static_cast<unsigned char>(text[start]);
  char32_t code = lead < 0x80 ? lead : lead < 0xE0 ? lead & 0x1F : lead < 0xF0 ? lead & 0x0F : lead & 0x07;
  for (std::size_t i = start + 1; i < end; ++i) code = (code << 6) | (static_cast<unsigned char>(text[i]) & 0x3F);
  return code;
}

void append_utf8(std::string& out, char32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// The smallest string of at most MAX_CHARS characters above every string starting with TEXT's
// first MAX_CHARS characters, or nullopt when none exists.
std::optional<std::string> truncated_upper_bound(const std::string& text, std::size_t max_chars) {
  const std::size_t prefix = utf8_prefix_bytes(text, max_chars);
  if (prefix == text.size()) return text;
  // Character boundaries of the prefix, to increment from the last character backwards.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < prefix; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  for (std::size_t k = starts.size(); k-- > 0;) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : prefix;
    char32_t next = decode_utf8(text, starts[k], end) + 1;
    if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;  // skip the surrogate range
    if (next > 0x10FFFF) continue;
    std::string bound = text.substr(0, starts[k]);
    append_utf8(bound, next);
    return bound;
  }
  return std::nullopt;
}

std::optional<Bytes> truncated_upper_bound(const Bytes& bytes, std::size_t max_bytes) {
  if (bytes.size() <= max_bytes) return bytes;
  Bytes bound(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(max_bytes));
  while (!bound.empty()) {
    if (bound.back() != 0xFF) {
      ++bound.back();
      return bound;
    }
    bound.pop_back();
  }
  return std::nullopt;
}

// Pointers into the rows: a new extreme is remembered without copying its value.
struct Extremes {
  const Literal* min = nullptr;
  const Literal* max = nullptr;
};

}  // namespace

int compare_literals(const Type& type, const Literal& a, const Literal& b) {
  switch (type.kind()) {
    case TypeKind::kBoolean:
      return three_way(std::get<bool>(a), std::get<bool>(b));
    case TypeKind::kInt:
    case TypeKind::kDate:
      return three_way(std::get<std::int32_t>(a), std::get<std::int32_t>(b));
    case TypeKind::kLong:
    case TypeKind::kTime:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestamptz:
      return three_way(std::get<std::int64_t>(a), std::get<std::int64_t>(b));
    case TypeKind::kFloat:
      return three_way(std::get<float>(a), std::get<float>(b));
    case TypeKind::kDouble:
      return three_way(std::get<double>(a), std::get<double>(b));
    case TypeKind::kString:
      // std::string orders as memcmp does: by unsigned bytes, which for UTF-8 is code point order.
      return three_way(std::get<std::string>(a), std::get<std::string>(b));
    case TypeKind::kUuid:
      return three_way(std::get<Uuid>(a).bytes, std::get<Uuid>(b).bytes);
    case TypeKind::kFixed:
    case TypeKind::kBinary:
      return three_way(std::get<Bytes>(a), std::get<Bytes>(b));
    case TypeKind::kDecimal:
      return three_way(std::get<Decimal>(a).unscaled, std::get<Decimal>(b).unscaled);
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      break;
  }
  fail("{} values are not ordered", type.to_string());
}

ColumnMetrics compute_column_metrics(const Schema& schema, RowView rows, std::size_t truncate_length) {
  ColumnMetrics metrics;
  const auto& fields = schema.fields();
  struct ColumnState {
    std::int64_t nulls = 0;
    std::int64_t nans = 0;
    Extremes extremes;
  };
  // Row by row (rows are separate vectors: one pass over each keeps it in cache).
  std::vector<ColumnState> columns(fields.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    if (row.size() < fields.size()) fail("row {} has {} values for {} columns", r, row.size(), fields.size());
    for (std::size_t c = 0; c < fields.size(); ++c) {
      const Literal& value = row[c];
      ColumnState& column = columns[c];
      if (std::holds_alternative<std::monostate>(value)) {
        ++column.nulls;
        continue;
      }
      if (is_nan(value)) {
        ++column.nans;
        continue;
      }
      const Type& type = *fields[c].type;
      Extremes& extremes = column.extremes;
      if (extremes.min == nullptr) {
        extremes.min = extremes.max = &value;
      } else if (compare_literals(type, value, *extremes.min) < 0) {
        extremes.min = &value;
      } else if (compare_literals(type, value, *extremes.max) > 0) {
        extremes.max = &value;
      }
    }
  }
  for (std::size_t c = 0; c < fields.size(); ++c) {
    const NestedField& field = fields[c];
    const Type& type = *field.type;
    const bool floating = type.kind() == TypeKind::kFloat || type.kind() == TypeKind::kDouble;
    const std::int64_t nulls = columns[c].nulls, nans = columns[c].nans;
    const Extremes& extremes = columns[c].extremes;
    metrics.value_counts[field.id] = static_cast<std::int64_t>(rows.size());
    metrics.null_value_counts[field.id] = nulls;
    if (floating) metrics.nan_value_counts[field.id] = nans;
    if (extremes.min == nullptr) continue;

    Literal lower = *extremes.min;
    std::optional<Literal> upper = *extremes.max;
    if (type.kind() == TypeKind::kString) {
      const auto& min_text = std::get<std::string>(lower);
      lower = min_text.substr(0, utf8_prefix_bytes(min_text, truncate_length));
      auto bound = truncated_upper_bound(std::get<std::string>(*upper), truncate_length);
      upper = bound ? std::optional<Literal>(*bound) : std::nullopt;
    } else if (type.kind() == TypeKind::kBinary) {
      auto& min_bytes = std::get<Bytes>(lower);
      if (min_bytes.size() > truncate_length) min_bytes.resize(truncate_length);
      auto bound = truncated_upper_bound(std::get<Bytes>(*upper), truncate_length);
      upper = bound ? std::optional<Literal>(*bound) : std::nullopt;
    }
    metrics.lower_bounds[field.id] = to_single_value(type, lower);
    if (upper) metrics.upper_bounds[field.id] = to_single_value(type, *upper);
  }
  return metrics;
}

}  // namespace binberg::iceberg
