#include "mysql/transaction_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <thread>

#include "core/error.h"
#include "core/failpoint.h"

namespace binberg::mysql {
namespace {

constexpr std::uint8_t kGtidStandalone = 1;  // FL_STANDALONE: no BEGIN/COMMIT, one statement

// The statement's first keyword, upper-cased, skipping whitespace and /* */ comments.
std::string first_keyword(std::string_view statement) {
  std::size_t i = 0;
  for (;;) {
    while (i < statement.size() && std::isspace(static_cast<unsigned char>(statement[i]))) ++i;
    if (statement.substr(i, 2) == "/*") {
      const auto end = statement.find("*/", i + 2);
      if (end == std::string_view::npos) return {};
      i = end + 2;
      continue;
    }
    break;
  }
  std::string word;
  while (i < statement.size() && std::isalpha(static_cast<unsigned char>(statement[i]))) {
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(statement[i++])));
  }
  return word;
}

bool is_row_data_statement(const std::string& keyword) {
  return keyword == "INSERT" || keyword == "UPDATE" || keyword == "DELETE" || keyword == "REPLACE" || keyword == "LOAD";
}

Op op_of(RowsKind kind) {
  switch (kind) {
    case RowsKind::kWrite:
      return Op::kCreate;
    case RowsKind::kUpdate:
      return Op::kUpdate;
    case RowsKind::kDelete:
      return Op::kDelete;
  }
  return Op::kCreate;
}

}  // namespace

bool is_schema_change(std::string_view statement) {
  const std::string keyword = first_keyword(statement);
  return keyword == "CREATE" || keyword == "ALTER" || keyword == "DROP" || keyword == "RENAME" || keyword == "TRUNCATE";
}

TransactionReader::TransactionReader(StreamOptions options, CharsetNames charsets, ReconnectPolicy reconnect,
                                     SpoolOptions spool)
    : options_(std::move(options)), charsets_(std::move(charsets)), reconnect_(reconnect), spool_(std::move(spool)) {
  if (options_.start_position) position_ = *options_.start_position;
  if (options_.start_gtid) gtid_position_ = *options_.start_gtid;
  connect();
}

void TransactionReader::connect() {
  tables_.clear();  // table ids are only valid within one server run
  stream_.emplace(BinlogStream::open(options_));
  if (!options_.start_position) position_ = stream_->position();
}

std::optional<SourceTransaction> TransactionReader::next() {
  std::optional<EncodedTransaction> encoded = next_encoded();
  if (!encoded) return std::nullopt;
  std::vector<ChangeEvent> events;
  for (std::vector<ChangeEvent> batch; !(batch = decode(*encoded, 4096)).empty();) {
    for (ChangeEvent& event : batch) events.push_back(std::move(event));
  }
  SourceTransaction txn = std::move(encoded->header);  // decode() reads it
  txn.events = std::move(events);
  return txn;
}

std::optional<EncodedTransaction> TransactionReader::next_encoded() {
  auto deadline = std::chrono::steady_clock::now() + reconnect_.give_up_after;
  Backoff backoff(reconnect_.first_delay, reconnect_.max_delay);
  for (;;) {
    try {
      if (!stream_) connect();
      return read_transaction();
    } catch (const ConnectionError& e) {
      // Only lost connections are retried: a decoding or position error would fail the same way.
      if (!options_.blocking || std::chrono::steady_clock::now() >= deadline) throw;
      const std::chrono::milliseconds delay = backoff.next();
      spdlog::warn("binlog source: {}; reconnecting in {} ms from {}", e.what(), delay.count(), position_.to_string());
      stream_.reset();
      // Resume exactly after the last whole transaction; a half-read one is read again.
      options_.start_position = position_;
      options_.start_gtid.reset();
      ++reconnects_;
      for (auto slept = std::chrono::milliseconds(0); slept < delay; slept += std::chrono::milliseconds(50)) {
        if (cancelled_ && cancelled_()) return std::nullopt;
        std::this_thread::sleep_for(std::min(std::chrono::milliseconds(50), delay - slept));
      }
    }
  }
}

std::optional<EncodedTransaction> TransactionReader::read_transaction() {
  std::optional<EncodedTransaction> txn;
  bool standalone = false;
  const auto begin = [&] { txn.emplace(EncodedTransaction{{}, RowsSpool(spool_), 0}); };
  while (auto event = stream_->next()) {
    const std::string where = fmt::format("binlog {}", event->end.to_string());
    switch (event->kind) {
      case EventKind::kGtid:
        if (txn) {
          fail("{}: GTID {} starts inside transaction {}", where, event->gtid->to_string(), txn->header.gtid);
        }
        begin();
        txn->header.gtid = event->gtid->to_string();
        txn->header.server_id = event->server_id;
        standalone = (event->gtid_flags & kGtidStandalone) != 0;
        break;
      case EventKind::kTableMap: {
        auto map = std::make_shared<const TableMap>(parse_table_map(*event->table_map, charsets_));
        tables_.insert_or_assign(map->table_id, std::move(map));
        break;
      }
      case EventKind::kWriteRows:
      case EventKind::kUpdateRows:
      case EventKind::kDeleteRows:
        if (!txn) fail("{}: rows event outside a transaction", where);
        add_rows(*txn, *event);
        break;
      case EventKind::kXid:
        if (!txn) fail("{}: XID outside a transaction", where);
        finish(txn->header, *event);
        return txn;
      case EventKind::kQuery: {
        const std::string keyword = first_keyword(event->statement);
        if (keyword == "BEGIN" || keyword == "SAVEPOINT") break;
        if (!txn) begin();  // servers without GTIDs: BEGIN ... COMMIT only
        if (keyword == "COMMIT") {
          finish(txn->header, *event);  // non-transactional engines end with COMMIT, not XID
          return txn;
        }
        if (keyword == "ROLLBACK")
          fail("{}: logged ROLLBACK (mixed transactional and non-transactional tables)", where);
        if (is_row_data_statement(keyword)) {
          fail("{}: statement-based row change '{}' (set binlog_format=ROW on the source)", where,
               event->statement.substr(0, 80));
        }
        if (is_schema_change(event->statement)) {
          txn->header.schema_change = SchemaChange{event->database, event->statement};
        }
        if (standalone) {
          finish(txn->header, *event);
          return txn;
        }
        break;
      }
      case EventKind::kHeartbeat:
        // The source is idle: let the caller act on time (cut a commit, notice a stop request).
        if (!txn) return std::nullopt;
        break;
      default:
        break;
    }
  }
  return std::nullopt;  // end of binlog (non-blocking); a partial transaction is read again later
}

void TransactionReader::add_rows(EncodedTransaction& txn, BinlogEvent& event) {
  auto table = tables_.find(event.rows->table_id);
  if (table == tables_.end()) {
    fail("binlog {}: rows event for table id {} without TABLE_MAP", event.end.to_string(), event.rows->table_id);
  }
  const std::string name = table->second->schema->qualified_name();
  auto& tables = txn.header.tables;
  if (std::find(tables.begin(), tables.end(), name) == tables.end()) tables.push_back(name);
  txn.rows.add(EncodedRows{table->second, std::move(*event.rows), event.server_id, std::move(event.end)});
}

std::vector<ChangeEvent> TransactionReader::decode(EncodedTransaction& txn, std::size_t max_events) {
  std::vector<ChangeEvent> changes;
  const SourceTransaction& header = txn.header;
  while (changes.size() < max_events) {
    std::optional<EncodedRows> encoded = txn.rows.next();
    if (!encoded) break;
    const TableMap& map = *encoded->table;
    for (auto& row : decoder_.decode(map, encoded->rows, "binlog " + encoded->end.to_string())) {
      ChangeEvent& change = changes.emplace_back();
      change.op = op_of(encoded->rows.kind);
      change.schema = map.schema;
      change.before = std::move(row.before);
      change.after = std::move(row.after);
      change.source.server_id = encoded->server_id;
      change.source.gtid = header.gtid;
      change.source.row_index = txn.next_row_index++;
      change.source.database = map.schema->database;
      change.source.table = map.schema->table;
      change.source.file = header.file;
      change.source.end_pos = header.end_pos;
      change.source.commit_ts_ms = header.commit_ts_ms;
      change.event_id = make_event_id(change.source, change.op);
    }
  }
  return changes;
}

void TransactionReader::finish(SourceTransaction& txn, const BinlogEvent& commit) {
  failpoint::hit("source.before_transaction_complete");
  txn.file = commit.end.file;
  txn.end_pos = commit.end.offset;
  txn.commit_ts_ms = static_cast<std::int64_t>(commit.timestamp) * 1000;
  std::sort(txn.tables.begin(), txn.tables.end());
  position_ = commit.end;
  if (!txn.gtid.empty()) gtid_position_.advance(Gtid::parse(txn.gtid));
}

}  // namespace binberg::mysql
