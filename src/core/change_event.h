#pragma once

// The change event model every pipeline stage shares: one event per changed row, with the
// before/after images, where it came from, and an id that is the same every time the same
// source position is read again (the basis of de-duplication and of the event-id audit).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/table_schema.h"
#include "core/value.h"

namespace binberg {

using RowImage = std::vector<Value>;  // one value per column of the event's schema

enum class Op : char { kSnapshot = 'r', kCreate = 'c', kUpdate = 'u', kDelete = 'd' };

struct SourceInfo {
  std::uint32_t server_id = 0;
  std::string gtid;             // MariaDB domain-server-seq of the transaction; empty without GTIDs
  std::string file;             // binlog file holding the transaction
  std::uint64_t end_pos = 0;    // position right after the transaction's commit event
  std::uint32_t row_index = 0;  // 0-based index of the row within its transaction
  std::int64_t commit_ts_ms = 0;
  std::string database;
  std::string table;
};

struct ChangeEvent {
  Op op = Op::kCreate;
  std::shared_ptr<const TableSchema> schema;
  std::optional<RowImage> before;  // u, d
  std::optional<RowImage> after;   // r, c, u
  SourceInfo source;
  std::string event_id;
};

// "<gtid>#<row_index>" when the transaction has a GTID, else "<file>:<end_pos>#<row_index>".
// Snapshot rows: "snapshot:<file>:<pos>:<db>.<table>#<row_index>" (pos is the snapshot position).
std::string make_event_id(const SourceInfo& source, Op op);

// The values of the primary-key columns of IMAGE, in key order (none without a primary key).
RowImage primary_key_of(const TableSchema& schema, const RowImage& image);
// The primary key of the row EVENT changes: of its after image, else of its before image.
RowImage primary_key_of(const ChangeEvent& event);

}  // namespace binberg
