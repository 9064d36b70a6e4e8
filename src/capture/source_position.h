#pragma once

// Where a table stands in the source's history, as every snapshot binberg commits records it in
// its summary. A restart resumes from the tables' own positions (never from a side file):
//
//   binberg.source.binlog-file  binlog file after the last transaction the snapshot contains
//   binberg.source.binlog-pos   offset in that file right after the transaction's commit event
//   binberg.source.gtid         the MariaDB GTID position (domain-server-seq list) at that point
//
// Positions are ordered by binlog file (by its numeric suffix) and offset: a transaction is in a
// table when its end position is at or before the table's position.

#include <compare>
#include <map>
#include <optional>
#include <string>

#include "core/source_transaction.h"
#include "mysql/binlog_stream.h"
#include "mysql/gtid.h"
#include "tables/snapshot_properties.h"

namespace binberg::capture {

struct SourcePosition {
  mysql::BinlogPosition binlog;
  mysql::GtidPosition gtid;

  // Whether the transaction ending at FILE:END_POS is at or before this position.
  bool contains(const std::string& file, std::uint64_t end_pos) const;
  bool contains(const SourceTransaction& txn) const { return contains(txn.file, txn.end_pos); }

  std::map<std::string, std::string> to_summary() const;
  // Nullopt when the summary has no position (a table binberg has not written yet). Throws Error
  // naming the property when it is malformed.
  static std::optional<SourcePosition> from_summary(const std::map<std::string, std::string>& summary);

  std::string to_string() const;  // "mysql-bin.000003:1234 (gtid 0-1-57)"
};

// Orders binlog positions: files by the number after their last '.', then offsets.
std::strong_ordering compare_binlog(const mysql::BinlogPosition& a, const mysql::BinlogPosition& b);

}  // namespace binberg::capture
