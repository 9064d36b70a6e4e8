#pragma once

// A replication stream from MariaDB over Connector/C's replication API (COM_BINLOG_DUMP).
// Every event's CRC32 is verified. Starts from a file:offset or from a GTID position.
// This layer hands out events one at a time; grouping into transactions and row decoding sit above it.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "mysql/connection.h"
#include "mysql/gtid.h"
#include "mysql/row_decoder.h"
#include "mysql/table_map.h"

namespace binberg::mysql {

// The server cannot stream from the requested position (purged or never written).
class PositionUnavailable : public Error {
 public:
  using Error::Error;
};

struct BinlogPosition {
  std::string file;
  std::uint64_t offset = 4;  // 4: just past the binlog magic, the first event

  std::string to_string() const;
  bool operator==(const BinlogPosition&) const = default;
};

struct StreamOptions {
  ConnectionOptions connection;
  std::uint32_t server_id = 0;  // must be unique among the server's replicas; 0 is refused
  std::optional<BinlogPosition> start_position;
  std::optional<GtidPosition> start_gtid;  // used when start_position is empty
  bool blocking = true;                    // false: next() returns nullopt at the end of the binlog
  std::chrono::milliseconds heartbeat{1000};
};

enum class EventKind {
  kFormatDescription,
  kRotate,
  kGtidList,
  kGtid,
  kTableMap,
  kWriteRows,
  kUpdateRows,
  kDeleteRows,
  kXid,
  kQuery,
  kHeartbeat,
  kOther,
};

const char* to_string(EventKind kind);

struct BinlogEvent {
  EventKind kind = EventKind::kOther;
  std::uint8_t type_code = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t server_id = 0;
  BinlogPosition end;                          // where the event after this one starts
  std::optional<Gtid> gtid;                    // kGtid
  std::uint8_t gtid_flags = 0;                 // kGtid: FL_STANDALONE (no BEGIN/COMMIT around it), FL_DDL, ...
  std::string database;                        // kQuery
  std::string statement;                       // kQuery
  std::optional<TableMapEventData> table_map;  // kTableMap
  std::optional<RowsEventData> rows;           // kWriteRows, kUpdateRows, kDeleteRows
};

class BinlogStream {
 public:
  // Connects, announces checksum and GTID capability and starts the dump; throws Error.
  static BinlogStream open(const StreamOptions& options);

  BinlogStream(BinlogStream&&) noexcept;
  BinlogStream& operator=(BinlogStream&&) noexcept;
  ~BinlogStream();

  // The next event; nullopt at the end of the binlog in non-blocking mode. Throws Error on a
  // checksum mismatch, a dropped connection or an event the client cannot parse.
  std::optional<BinlogEvent> next();

  // Position after the last event returned.
  const BinlogPosition& position() const { return position_; }

 private:
  struct State;
  explicit BinlogStream(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
  BinlogPosition position_;
};

}  // namespace binberg::mysql
