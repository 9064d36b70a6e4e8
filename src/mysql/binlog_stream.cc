#include "mysql/binlog_stream.h"

#include <mysql.h>
// mariadb_rpl.h needs mysql.h first.
#include <mariadb_rpl.h>

#include "core/error.h"
#include "core/failpoint.h"
#include "mysql/source_checks.h"

namespace binberg::mysql {
namespace {

std::string text(const MARIADB_STRING& value) { return std::string(value.str, value.length); }

EventKind kind_of(mariadb_rpl_event type) {
  switch (type) {
    case FORMAT_DESCRIPTION_EVENT:
      return EventKind::kFormatDescription;
    case ROTATE_EVENT:
      return EventKind::kRotate;
    case GTID_LIST_EVENT:
      return EventKind::kGtidList;
    case GTID_EVENT:
      return EventKind::kGtid;
    case TABLE_MAP_EVENT:
      return EventKind::kTableMap;
    case WRITE_ROWS_EVENT_V1:
    case WRITE_ROWS_EVENT:
    case WRITE_ROWS_COMPRESSED_EVENT_V1:
    case WRITE_ROWS_COMPRESSED_EVENT:
      return EventKind::kWriteRows;
    case UPDATE_ROWS_EVENT_V1:
    case UPDATE_ROWS_EVENT:
    case UPDATE_ROWS_COMPRESSED_EVENT_V1:
    case UPDATE_ROWS_COMPRESSED_EVENT:
      return EventKind::kUpdateRows;
    case DELETE_ROWS_EVENT_V1:
    case DELETE_ROWS_EVENT:
    case DELETE_ROWS_COMPRESSED_EVENT_V1:
    case DELETE_ROWS_COMPRESSED_EVENT:
      return EventKind::kDeleteRows;
    case XID_EVENT:
      return EventKind::kXid;
    case QUERY_EVENT:
    case QUERY_COMPRESSED_EVENT:
      return EventKind::kQuery;
    case HEARTBEAT_LOG_EVENT:
      return EventKind::kHeartbeat;
    default:
      return EventKind::kOther;
  }
}

}  // namespace

std::string BinlogPosition::to_string() const { return fmt::format("{}:{}", file, offset); }

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kFormatDescription:
      return "FORMAT_DESCRIPTION";
    case EventKind::kRotate:
      return "ROTATE";
    case EventKind::kGtidList:
      return "GTID_LIST";
    case EventKind::kGtid:
      return "GTID";
    case EventKind::kTableMap:
      return "TABLE_MAP";
    case EventKind::kWriteRows:
      return "WRITE_ROWS";
    case EventKind::kUpdateRows:
      return "UPDATE_ROWS";
    case EventKind::kDeleteRows:
      return "DELETE_ROWS";
    case EventKind::kXid:
      return "XID";
    case EventKind::kQuery:
      return "QUERY";
    case EventKind::kHeartbeat:
      return "HEARTBEAT";
    case EventKind::kOther:
      return "OTHER";
  }
  return "?";
}

struct BinlogStream::State {
  Connection connection;
  MARIADB_RPL* rpl = nullptr;
  std::string address;
  std::size_t checksum_bytes = 0;

  explicit State(Connection c) : connection(std::move(c)), address(connection.options().address()) {}
  ~State() {
    if (rpl != nullptr) {
      mariadb_rpl_close(rpl);
    }
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

BinlogStream::BinlogStream(std::unique_ptr<State> state) : state_(std::move(state)) {}
BinlogStream::BinlogStream(BinlogStream&&) noexcept = default;
BinlogStream& BinlogStream::operator=(BinlogStream&&) noexcept = default;
BinlogStream::~BinlogStream() = default;

BinlogStream BinlogStream::open(const StreamOptions& options) {
  if (options.server_id == 0) {
    throw ConfigError("binlog stream: server_id must be a non-zero id unique among the source's replicas");
  }
  if (!options.start_position && !options.start_gtid) {
    throw ConfigError("binlog stream: give a start position (file:offset) or a GTID position");
  }
  auto state = std::make_unique<State>(Connection::open(options.connection));
  Connection& connection = state->connection;
  require_cdc_ready(connection);
  if (options.start_position) require_position_available(connection, *options.start_position);
  // Without the checksum announcement the server refuses to stream; without capability 4 it sends
  // dummy events in place of MariaDB GTID events.
  connection.execute("SET @master_binlog_checksum = @@global.binlog_checksum");
  state->checksum_bytes = connection.scalar("SELECT @@global.binlog_checksum").value_or("NONE") == "NONE" ? 0 : 4;
  connection.execute("SET @mariadb_slave_capability = 4");
  const auto heartbeat_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options.heartbeat).count();
  connection.execute(fmt::format("SET @master_heartbeat_period = {}", heartbeat_ns));

  BinlogPosition start;
  if (options.start_position) {
    start = *options.start_position;
  } else {
    connection.execute(
        fmt::format("SET @slave_connect_state = '{}'", connection.escape(options.start_gtid->to_string())));
    connection.execute("SET @slave_gtid_strict_mode = 1");
  }

  state->rpl = mariadb_rpl_init(connection.handle());
  if (state->rpl == nullptr) fail("binlog {}: mariadb_rpl_init failed", state->address);
  MARIADB_RPL* rpl = state->rpl;
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_FILENAME, start.file.c_str(), start.file.size());
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_START, static_cast<unsigned long>(start.offset));
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_SERVER_ID, static_cast<unsigned int>(options.server_id));
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_VERIFY_CHECKSUM, static_cast<std::uint32_t>(1));
  unsigned int flags = MARIADB_RPL_BINLOG_SEND_ANNOTATE_ROWS;
  if (!options.blocking) flags |= MARIADB_RPL_BINLOG_DUMP_NON_BLOCK;
  mariadb_rpl_optionsv(rpl, MARIADB_RPL_FLAGS, flags);
  if (mariadb_rpl_open(rpl) != 0) {
    fail("binlog {}: cannot start the dump at {}: {} {}", state->address,
         options.start_position ? start.to_string() : "GTID " + options.start_gtid->to_string(), mariadb_rpl_error(rpl),
         mysql_error(connection.handle()));
  }
  BinlogStream stream(std::move(state));
  stream.position_ = start;
  return stream;
}

namespace {

// Where a ROTATE moves the stream: read from the event's own bytes (19-byte header, u64 position,
// file name up to the checksum). The library reports a wrong name for the artificial rotate a
// server sends when a dump starts at the end of a binlog file that a crash left without a closing
// rotate. WHERE names the stream and its position, for errors.
BinlogPosition rotate_target(const MARIADB_RPL_EVENT& raw, std::size_t checksum_bytes, const std::string& where) {
  const unsigned char* start = raw.raw_data + raw.raw_data_ofs;
  const unsigned char* end = start + raw.event_length - checksum_bytes;
  constexpr std::size_t kHeader = 19;
  if (end < start + kHeader + 8 + 1) fail("{}: the ROTATE after it is truncated", where);
  std::uint64_t offset = 0;
  for (int i = 7; i >= 0; --i) offset = (offset << 8) | start[kHeader + static_cast<std::size_t>(i)];
  return BinlogPosition{std::string(reinterpret_cast<const char*>(start + kHeader + 8),
                                    static_cast<std::size_t>(end - (start + kHeader + 8))),
                        offset};
}

TableMapEventData table_map_of(const MARIADB_RPL_EVENT& raw, std::size_t checksum_bytes, const std::string& where) {
  const auto& map = raw.event.table_map;
  const std::size_t null_bytes = (map.column_count + 7) / 8;
  // The optional metadata runs from the null bitmap to the event's end, before its checksum.
  const unsigned char* optional_start = map.null_indicator + null_bytes;
  const unsigned char* event_end = raw.raw_data + raw.raw_data_ofs + raw.event_length - checksum_bytes;
  if (optional_start > event_end) fail("{}: the TABLE_MAP there is truncated", where);
  return TableMapEventData{
      map.table_id,
      text(map.database),
      text(map.table),
      text(map.column_types),
      text(map.metadata),
      std::string(reinterpret_cast<const char*>(map.null_indicator), null_bytes),
      std::string(reinterpret_cast<const char*>(optional_start), static_cast<std::size_t>(event_end - optional_start)),
  };
}

RowsEventData rows_of(const MARIADB_RPL_EVENT& raw, EventKind kind, const std::string& where) {
  const auto& rows = raw.event.rows;
  if (rows.compressed) fail("{}: a compressed rows event there (turn log_bin_compress off)", where);
  const std::size_t bitmap_bytes = (rows.column_count + 7) / 8;
  RowsEventData data;
  data.kind = kind == EventKind::kWriteRows    ? RowsKind::kWrite
              : kind == EventKind::kUpdateRows ? RowsKind::kUpdate
                                               : RowsKind::kDelete;
  data.table_id = rows.table_id;
  data.column_count = rows.column_count;
  data.columns_before.assign(reinterpret_cast<const char*>(rows.column_bitmap), bitmap_bytes);
  if (data.kind == RowsKind::kUpdate) {
    data.columns_after.assign(reinterpret_cast<const char*>(rows.column_update_bitmap), bitmap_bytes);
  }
  data.rows.assign(static_cast<const char*>(rows.row_data), rows.row_data_size);
  return data;
}

// Throws what a failed fetch after POSITION on the stream at ADDRESS means.
[[noreturn]] void fetch_failed(MARIADB_RPL* rpl, MYSQL* connection, const std::string& address,
                               const BinlogPosition& position) {
  const unsigned code = mariadb_rpl_errno(rpl) != 0 ? mariadb_rpl_errno(rpl) : mysql_errno(connection);
  const std::string message = fmt::format("binlog {}: reading after {} failed: {} {} (error {})", address,
                                          position.to_string(), mariadb_rpl_error(rpl), mysql_error(connection), code);
  // 2013/2006: the server went away; 1236: the server refused the position (e.g. purged).
  if (code == 2013 || code == 2006) throw ConnectionError(message);
  if (code == 1236) throw PositionUnavailable(message + "; the position may have been purged: take a fresh snapshot");
  throw Error(message);
}

}  // namespace

std::optional<BinlogEvent> BinlogStream::next() {
  MARIADB_RPL* rpl = state_->rpl;
  std::unique_ptr<MARIADB_RPL_EVENT, decltype(&mariadb_free_rpl_event)> raw(mariadb_rpl_fetch(rpl, nullptr),
                                                                            &mariadb_free_rpl_event);
  if (!raw) {
    if (mariadb_rpl_errno(rpl) == 0 && mysql_errno(state_->connection.handle()) == 0) return std::nullopt;
    fetch_failed(rpl, state_->connection.handle(), state_->address, position_);
  }
  failpoint::hit("source.after_read");
  BinlogEvent event;
  event.type_code = static_cast<std::uint8_t>(raw->event_type);
  event.kind = kind_of(raw->event_type);
  event.timestamp = raw->timestamp;
  event.server_id = raw->server_id;
  const auto where = [&] { return fmt::format("binlog {} after {}", state_->address, position_.to_string()); };
  switch (event.kind) {
    case EventKind::kRotate:
      position_ = rotate_target(*raw, state_->checksum_bytes, where());
      break;
    case EventKind::kGtid:
      event.gtid = Gtid{raw->event.gtid.domain_id, raw->server_id, raw->event.gtid.sequence_nr};
      event.gtid_flags = raw->event.gtid.flags;
      break;
    case EventKind::kTableMap:
      event.table_map = table_map_of(*raw, state_->checksum_bytes, where());
      break;
    case EventKind::kWriteRows:
    case EventKind::kUpdateRows:
    case EventKind::kDeleteRows:
      event.rows = rows_of(*raw, event.kind, where());
      break;
    case EventKind::kQuery:
      event.database = text(raw->event.query.database);
      event.statement = text(raw->event.query.statement);
      break;
    default:
      break;
  }
  // Artificial and heartbeat events carry no position of their own.
  if (event.kind != EventKind::kRotate && event.kind != EventKind::kHeartbeat && raw->next_event_pos != 0) {
    position_.offset = raw->next_event_pos;
  }
  event.end = position_;
  return event;
}

}  // namespace binberg::mysql
