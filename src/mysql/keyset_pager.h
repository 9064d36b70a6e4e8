#pragma once

// Keyset paging of a table in primary-key order: each chunk is one query for the rows whose key
// follows the last key read, so a copy can go on (or, later, resume) from any chunk boundary, and
// each query reads only its chunk through the primary key's range.
//
// Invariant: the comparison "key > last key" written into the query means exactly what the
// server's own order of the primary key means, for every key type the pager accepts. MariaDB
// does not compare every type by its text (checked on the server, tests/mysql/keyset_pager_test.cc
// and the key matrix in tests/mysql/snapshot_reader_test.cc):
//   - ENUM sorts by index, SET by its bit mask: comparing the text ('z' < 'a' as text, while
//     ENUM('z','a') puts 'z' first) loses rows. They compare by number; "after index i" is written
//     `k IN (i+1, ..., n)`, since the server does not use the key's range for `k > i` on an ENUM
//     (a SET's `k > mask` stays, its IN list could be 2^64 long: a key led by a SET is read from
//     its start by every chunk's query).
//   - FLOAT compares as the double it is; its shortest text (0.1) is another double, so the
//     literal is the float's exact value as a double (1.00000001490116119e-01).
//   - DOUBLE, DATETIME, TIMESTAMP (session time zone +00:00), TIME, DATE: typed literals with
//     every digit (17 significant digits, microseconds).
//   - character columns compare under the column's collation (case, accents, trailing spaces as
//     it says): the literal is the UTF-8 bytes converted to the column's character set under its
//     collation; the explicit COLLATE also lets the server keep the key order for `k = v`.
//   - binary columns compare as bytes (NUL included): hex literals.
// Tables the server cannot page consistently are not paged (streamed instead, TableSnapshot):
// no primary key; a key on a column prefix (ORDER BY sorts whole values, a filesort per chunk);
// CHAR under a NO PAD collation (MariaDB orders 'a\0' before 'a' but compares it after); key
// types without a comparable literal (JSON, geometry).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/change_event.h"

namespace binberg::mysql {

// What the server says about one column of a table's primary key.
struct KeyPart {
  std::string column;
  std::optional<std::uint32_t> prefix_length;  // a key on the column's first N characters/bytes
  std::string collation;                       // of a character column (ENUM and SET included)
};

class KeysetPager {
 public:
  // A pager for SCHEMA's primary key, whose parts PARTS describes in key order; nullopt when the
  // server cannot page the table by its key consistently (see above).
  static std::optional<KeysetPager> for_table(std::shared_ptr<const TableSchema> schema,
                                              const std::vector<KeyPart>& parts);

  // The query for the next CHUNK_ROWS rows (every column as select_expression reads it), or
  // nullopt when no key can follow the last one read.
  std::optional<std::string> next_query(std::size_t chunk_rows) const;
  // The first and last rows of the chunk just read: the next query starts after the last one's
  // key. A chunk never starts at the key the one before ended with (aborts otherwise: the query
  // compared otherwise than the server orders).
  void advance(const RowImage& first_row, const RowImage& last_row);

  // SQL that compares to COLUMN (of COLLATION when it is a character column) as VALUE does.
  static std::string literal(const Column& column, const std::string& collation, const Value& value);

 private:
  struct KeyColumn {
    std::size_t index;  // in the schema
    std::string collation;
  };
  KeysetPager(std::shared_ptr<const TableSchema> schema, std::vector<KeyColumn> key)
      : schema_(std::move(schema)), key_(std::move(key)) {}
  // `column = value` and `column > value` as the server orders the column; "" when no value can
  // follow VALUE.
  std::string equal(const KeyColumn& key, const Value& value) const;
  std::string after(const KeyColumn& key, const Value& value) const;

  std::shared_ptr<const TableSchema> schema_;
  std::vector<KeyColumn> key_;
  std::optional<RowImage> last_key_;  // nullopt before the first chunk
};

}  // namespace binberg::mysql
