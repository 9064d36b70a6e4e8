#pragma once

// A source transaction as the source hands it downstream: always whole. Its position is where
// the binlog continues after its commit, the point a restart resumes from.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/change_event.h"

namespace binberg {

// A DDL statement (CREATE/ALTER/DROP/RENAME/TRUNCATE TABLE), in order with the row changes.
struct SchemaChange {
  std::string database;   // the statement's default database
  std::string statement;  // as the source logged it
};

struct SourceTransaction {
  std::uint32_t server_id = 0;
  std::string gtid;  // empty without GTIDs
  std::string file;  // where the commit event is
  std::uint64_t end_pos = 0;
  std::int64_t commit_ts_ms = 0;
  std::vector<ChangeEvent> events;
  std::optional<SchemaChange> schema_change;  // DDL transactions carry no row events
  std::vector<std::string> tables;            // db.table touched, sorted, unique

  // How binberg names it (path B's kTransactionHeader, --accept-schema-change): its GTID, else
  // where it ends, "<file>:<pos>".
  std::string id() const { return gtid.empty() ? file + ":" + std::to_string(end_pos) : gtid; }
};

}  // namespace binberg
