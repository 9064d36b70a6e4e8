#pragma once

// The canonical text of rows, which reconciliation digests and which any reader can recompute
// from typed values (docs/reconcile.md; tests/iceberg/table_reader_tool.py does it in Python):
//
//   null                        no text (see the row encoding)
//   boolean                     "true" / "false"
//   int, long                   decimal digits, "-" for negatives
//   date                        days since 1970-01-01, decimal
//   time                        microseconds since midnight, decimal
//   timestamp, timestamptz      microseconds since 1970-01-01 00:00:00 (UTC for timestamptz)
//   float, double               the value as an IEEE-754 binary64 (floats widened exactly), its
//                               64 bits as 16 lowercase hex digits, most significant first
//   decimal(p, s)               the exact value in plain digits with s fraction digits ("-1.50")
//   string                      the UTF-8 text itself
//   uuid, fixed, binary         lowercase hex of the bytes
//
// A row encodes as, for each column in schema order, "-" for null or "<N>:<text>" where N is the
// byte length of the text, then "\n". A table's digest is the lowercase hex SHA-256 of its rows'
// encodings sorted bytewise and concatenated.

#include <optional>
#include <string>
#include <vector>

#include "iceberg/arrow_rows.h"
#include "iceberg/schema.h"

namespace binberg::iceberg {

// VALUE (of TYPE) as canonical text; nullopt for null. Throws Error for nested types.
std::optional<std::string> canonical_text(const Type& type, const Literal& value);

// ROW (one value per top-level field of SCHEMA) as its canonical encoding.
std::string canonical_row_encoding(const Schema& schema, const Row& row);

// Collects row encodings and digests them in canonical (sorted) order.
class RowDigest {
 public:
  void add(std::string encoding) { rows_.push_back(std::move(encoding)); }
  std::size_t rows() const { return rows_.size(); }
  // Sorts what was added and returns the hex SHA-256 of it.
  std::string finish();

 private:
  std::vector<std::string> rows_;
};

}  // namespace binberg::iceberg
