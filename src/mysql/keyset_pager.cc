#include "mysql/keyset_pager.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/assert.h"
#include "core/error.h"
#include "mysql/text_value.h"

namespace binberg::mysql {
namespace {

bool is_character(SourceType type) {
  return type == SourceType::kChar || type == SourceType::kVarchar || type == SourceType::kText ||
         type == SourceType::kEnum || type == SourceType::kSet;
}

// Types whose values have a literal the server compares as it orders the column.
bool has_comparable_literal(SourceType type) {
  return type != SourceType::kJson && type != SourceType::kGeometry && type != SourceType::kBlob &&
         type != SourceType::kText;
}

std::string hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) out += fmt::format("{:02X}", c);
  return out;
}

const std::string& text_of(const Column& column, const Value& value) {
  const auto* text = std::get_if<Text>(&value);
  if (text == nullptr) fail("column {}: expected text, got {}", column.name, to_display_string(value));
  return text->utf8;
}

// The index MariaDB orders an ENUM value by: 1-based among the symbols; 0 for the empty error
// value that non-strict modes store for a value that is not a symbol.
std::size_t enum_index(const Column& column, const Value& value) {
  const std::string& text = text_of(column, value);
  for (std::size_t i = 0; i < column.symbols.size(); ++i) {
    if (column.symbols[i] == text) return i + 1;
  }
  if (text.empty()) return 0;
  fail("column {}: '{}' is not one of the ENUM's values", column.name, text);
}

// The bit mask MariaDB orders a SET value by: bit i for the i-th symbol.
std::uint64_t set_mask(const Column& column, const Value& value) {
  const std::string& text = text_of(column, value);
  std::uint64_t mask = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view member = std::string_view(text).substr(start, end - start);
    const auto it = std::find(column.symbols.begin(), column.symbols.end(), member);
    if (it == column.symbols.end()) fail("column {}: '{}' is not one of the SET's values", column.name, member);
    mask |= std::uint64_t{1} << (it - column.symbols.begin());
    start = end + 1;
  }
  return mask;
}

}  // namespace

std::optional<KeysetPager> KeysetPager::for_table(std::shared_ptr<const TableSchema> schema,
                                                  const std::vector<KeyPart>& parts) {
  if (schema->primary_key.empty()) return std::nullopt;
  if (parts.size() != schema->primary_key.size()) {
    fail("table {}: its primary key changed while it was being read ({} columns, now {})", schema->qualified_name(),
         schema->primary_key.size(), parts.size());
  }
  std::vector<KeyColumn> key;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Column& column = schema->columns[schema->primary_key[i]];
    if (parts[i].column != column.name) {
      fail("table {}: its primary key changed while it was being read (column {} is now {})", schema->qualified_name(),
           column.name, parts[i].column);
    }
    const bool no_pad_char = column.type == SourceType::kChar && parts[i].collation.find("nopad") != std::string::npos;
    if (parts[i].prefix_length || !has_comparable_literal(column.type) || no_pad_char) return std::nullopt;
    if (is_character(column.type) && parts[i].collation.empty()) {
      fail("table {}: the server reports no collation for key column {}", schema->qualified_name(), column.name);
    }
    key.push_back(KeyColumn{schema->primary_key[i], parts[i].collation});
  }
  return KeysetPager(std::move(schema), std::move(key));
}

std::string KeysetPager::literal(const Column& column, const std::string& collation, const Value& value) {
  if (const auto* single = std::get_if<float>(&value)) return fmt::format("{:.17e}", static_cast<double>(*single));
  if (const auto* number = std::get_if<double>(&value)) return fmt::format("{:.17e}", *number);
  if (std::holds_alternative<std::int64_t>(value) || std::holds_alternative<std::uint64_t>(value) ||
      std::holds_alternative<Decimal>(value)) {
    return to_display_string(value);
  }
  if (std::holds_alternative<Date>(value)) return "DATE'" + to_display_string(value) + "'";
  if (std::holds_alternative<TimeOfDay>(value)) return "TIME'" + to_display_string(value) + "'";
  if (std::holds_alternative<DateTime>(value)) return "TIMESTAMP'" + to_display_string(value) + "'";
  if (const auto* utc = std::get_if<Timestamp>(&value)) {
    return "TIMESTAMP'" + to_display_string(DateTime{utc->micros}) + "'";  // the session is at +00:00
  }
  if (const auto* text = std::get_if<Text>(&value)) {
    BINBERG_ASSERT(!collation.empty(), "column {}: a text literal needs the column's collation", column.name);
    return fmt::format("CONVERT(_utf8mb4 X'{}' USING {}) COLLATE {}", hex(text->utf8), column.charset, collation);
  }
  if (const auto* bytes = std::get_if<Bytes>(&value)) return "X'" + hex(bytes->data) + "'";
  fail("column {}: no SQL literal for the key value {}", column.name, to_display_string(value));
}

std::string KeysetPager::equal(const KeyColumn& key, const Value& value) const {
  const Column& column = schema_->columns[key.index];
  const std::string name = quote_identifier(column.name);
  // The empty ENUM error value is no symbol to name: its index is.
  if (column.type == SourceType::kEnum && enum_index(column, value) == 0) return name + " = 0";
  return name + " = " + literal(column, key.collation, value);
}

std::string KeysetPager::after(const KeyColumn& key, const Value& value) const {
  const Column& column = schema_->columns[key.index];
  const std::string name = quote_identifier(column.name);
  if (column.type == SourceType::kEnum) {
    std::string indexes;
    for (std::size_t i = enum_index(column, value) + 1; i <= column.symbols.size(); ++i) {
      indexes += (indexes.empty() ? "" : ", ") + std::to_string(i);
    }
    return indexes.empty() ? "" : fmt::format("{} IN ({})", name, indexes);
  }
  if (column.type == SourceType::kSet) {
    const std::size_t members = column.symbols.size();
    const std::uint64_t all = members >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << members) - 1;
    const std::uint64_t mask = set_mask(column, value);
    return mask >= all ? "" : fmt::format("{} > {}", name, mask);
  }
  return name + " > " + literal(column, key.collation, value);
}

std::optional<std::string> KeysetPager::next_query(std::size_t chunk_rows) const {
  std::string order;
  for (const KeyColumn& key : key_)
    order += (order.empty() ? "" : ", ") + quote_identifier(schema_->columns[key.index].name);
  std::string sql = fmt::format("SELECT {} FROM {}.{} FORCE INDEX (PRIMARY)", select_list(*schema_),
                                quote_identifier(schema_->database), quote_identifier(schema_->table));
  if (last_key_) {
    // key > last  <=>  k1 > l1 OR (k1 = l1 AND k2 > l2) OR ..., each part compared as the server orders it.
    std::string where, equal_before;
    for (std::size_t i = 0; i < key_.size(); ++i) {
      const std::string greater = after(key_[i], (*last_key_)[i]);
      if (!greater.empty()) where += fmt::format("{}({}{})", where.empty() ? "" : " OR ", equal_before, greater);
      equal_before += equal(key_[i], (*last_key_)[i]) + " AND ";
    }
    if (where.empty()) return std::nullopt;
    sql += " WHERE " + where;
  }
  return sql + fmt::format(" ORDER BY {} LIMIT {}", order, chunk_rows);
}

void KeysetPager::advance(const RowImage& first_row, const RowImage& last_row) {
  BINBERG_ASSERT(!last_key_ || primary_key_of(*schema_, first_row) != *last_key_,
                 "{}: a chunk starts again at the key the chunk before ended with", schema_->qualified_name());
  last_key_ = primary_key_of(*schema_, last_row);
}

}  // namespace binberg::mysql
