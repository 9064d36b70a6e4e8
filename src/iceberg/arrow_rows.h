#pragma once

// Rows of a flat Iceberg schema (top-level primitive columns) and their Arrow form. Columns are
// matched by field id (PARQUET:field_id), never by name, so renamed and reordered columns read
// correctly; a column a file lacks (added to the schema later) reads as null, and int/float/decimal
// columns written before a type promotion read as the promoted type.

#include <cstdint>
#include <memory>
#include <vector>

#include "iceberg/detail/literal.h"
#include "iceberg/schema.h"

namespace arrow {
class DataType;
class Schema;
class Table;
}  // namespace arrow

namespace binberg::iceberg {

// One value per top-level field of the schema, in field order.
using Row = std::vector<Literal>;

// Rows to write, held either by value or by pointer: a writer passes its buffered rows without
// copying them.
class RowView {
 public:
  RowView(const std::vector<Row>& rows) : rows_(&rows) {}             // NOLINT: implicit by design
  RowView(const std::vector<const Row*>& rows) : pointers_(&rows) {}  // NOLINT: implicit by design

  std::size_t size() const { return rows_ != nullptr ? rows_->size() : pointers_->size(); }
  const Row& operator[](std::size_t i) const { return rows_ != nullptr ? (*rows_)[i] : *(*pointers_)[i]; }

 private:
  const std::vector<Row>* rows_ = nullptr;
  const std::vector<const Row*>* pointers_ = nullptr;
};

// The Arrow type a primitive Iceberg type is written as. Throws Error for nested types.
std::shared_ptr<arrow::DataType> arrow_type(const Type& type);
// The schema's fields with their ids as PARQUET:field_id; throws Error for nested fields.
std::shared_ptr<arrow::Schema> arrow_schema(const Schema& schema);

// Throws Error naming the row and column when a value does not fit its field (type, or null in a
// required field).
std::shared_ptr<arrow::Table> rows_to_arrow(const Schema& schema, RowView rows);

// The rows of TABLE as SCHEMA sees them (see the file comment). SOURCE names the data in errors.
std::vector<Row> rows_from_arrow(const Schema& schema, const arrow::Table& table, const std::string& source);

}  // namespace binberg::iceberg
