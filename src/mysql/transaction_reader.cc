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

TransactionReader::TransactionReader(StreamOptions options, CharsetNames charsets, ReconnectPolicy reconnect)
    : options_(std::move(options)), charsets_(std::move(charsets)), reconnect_(reconnect) {
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
  auto deadline = std::chrono::steady_clock::now() + reconnect_.give_up_after;
  auto delay = reconnect_.first_delay;
  for (;;) {
    try {
      if (!stream_) connect();
      return read_transaction();
    } catch (const ConnectionError& e) {
      // Only lost connections are retried: a decoding or position error would fail the same way.
      if (!options_.blocking || std::chrono::steady_clock::now() >= deadline) throw;
      spdlog::warn("binlog source: {}; reconnecting in {} ms from {}", e.what(), delay.count(), position_.to_string());
      stream_.reset();
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, reconnect_.max_delay);
      // Resume exactly after the last whole transaction; a half-read one is read again.
      options_.start_position = position_;
      options_.start_gtid.reset();
      ++reconnects_;
    }
  }
}

std::optional<SourceTransaction> TransactionReader::read_transaction() {
  std::optional<SourceTransaction> txn;
  std::uint32_t row_index = 0;
  bool standalone = false;
  while (auto event = stream_->next()) {
    const std::string where = fmt::format("binlog {}", event->end.to_string());
    switch (event->kind) {
      case EventKind::kGtid:
        if (txn) fail("{}: GTID {} starts inside transaction {}", where, event->gtid->to_string(), txn->gtid);
        txn.emplace();
        txn->gtid = event->gtid->to_string();
        txn->server_id = event->server_id;
        standalone = (event->gtid_flags & kGtidStandalone) != 0;
        row_index = 0;
        break;
      case EventKind::kTableMap: {
        TableMap map = parse_table_map(*event->table_map, charsets_);
        tables_.insert_or_assign(map.table_id, std::move(map));
        break;
      }
      case EventKind::kWriteRows:
      case EventKind::kUpdateRows:
      case EventKind::kDeleteRows:
        if (!txn) fail("{}: rows event outside a transaction", where);
        add_rows(*txn, *event, row_index);
        break;
      case EventKind::kXid:
        if (!txn) fail("{}: XID outside a transaction", where);
        finish(*txn, *event);
        return txn;
      case EventKind::kQuery: {
        const std::string keyword = first_keyword(event->statement);
        if (keyword == "BEGIN" || keyword == "SAVEPOINT") break;
        if (!txn) txn.emplace();  // servers without GTIDs: BEGIN ... COMMIT only
        if (keyword == "COMMIT") {
          finish(*txn, *event);  // non-transactional engines end with COMMIT, not XID
          return txn;
        }
        if (keyword == "ROLLBACK")
          fail("{}: logged ROLLBACK (mixed transactional and non-transactional tables)", where);
        if (is_row_data_statement(keyword)) {
          fail("{}: statement-based row change '{}' (set binlog_format=ROW on the source)", where,
               event->statement.substr(0, 80));
        }
        if (is_schema_change(event->statement)) {
          txn->schema_change = SchemaChange{event->database, event->statement};
        }
        if (standalone) {
          finish(*txn, *event);
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

void TransactionReader::add_rows(SourceTransaction& txn, const BinlogEvent& event, std::uint32_t& row_index) {
  const std::string where = fmt::format("binlog {}", event.end.to_string());
  auto table = tables_.find(event.rows->table_id);
  if (table == tables_.end()) fail("{}: rows event for table id {} without TABLE_MAP", where, event.rows->table_id);
  const TableMap& map = table->second;
  for (auto& row : decoder_.decode(map, *event.rows, where)) {
    ChangeEvent change;
    change.op = op_of(event.rows->kind);
    change.schema = map.schema;
    change.before = std::move(row.before);
    change.after = std::move(row.after);
    change.source.server_id = event.server_id;
    change.source.gtid = txn.gtid;
    change.source.row_index = row_index++;
    change.source.database = map.schema->database;
    change.source.table = map.schema->table;
    txn.events.push_back(std::move(change));
  }
  const std::string name = map.schema->qualified_name();
  if (std::find(txn.tables.begin(), txn.tables.end(), name) == txn.tables.end()) txn.tables.push_back(name);
}

void TransactionReader::finish(SourceTransaction& txn, const BinlogEvent& commit) {
  failpoint::hit("source.before_transaction_complete");
  txn.file = commit.end.file;
  txn.end_pos = commit.end.offset;
  txn.commit_ts_ms = static_cast<std::int64_t>(commit.timestamp) * 1000;
  std::sort(txn.tables.begin(), txn.tables.end());
  for (auto& change : txn.events) {
    change.source.file = txn.file;
    change.source.end_pos = txn.end_pos;
    change.source.commit_ts_ms = txn.commit_ts_ms;
    change.event_id = make_event_id(change.source, change.op);
  }
  position_ = commit.end;
  if (!txn.gtid.empty()) gtid_position_.advance(Gtid::parse(txn.gtid));
}

}  // namespace binberg::mysql
