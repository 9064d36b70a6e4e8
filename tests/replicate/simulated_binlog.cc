#include "replicate/simulated_binlog.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/assert.h"

namespace binberg::replicate::simulation {
namespace {

Column column(std::string name, SourceType type) {
  Column made;
  made.name = std::move(name);
  made.type = type;
  made.nullable = true;
  return made;
}

}  // namespace

SimulatedBinlog::SimulatedBinlog(SimRandom& random, SimClock& clock, int tables, bool keyless_table, int keys)
    : random_(random), clock_(clock), keys_(keys) {
  for (int index = 0; index < tables; ++index) {
    const std::string name = fmt::format("t{}", index);
    auto schema = std::make_shared<TableSchema>();
    schema->database = kDatabase;
    schema->table = name;
    schema->columns = {column("id", SourceType::kInt), column("v", SourceType::kBigInt)};
    schema->columns[0].nullable = false;
    // The last of several tables may have no primary key: it gets a changelog only.
    if (!(keyless_table && index > 0 && index == tables - 1)) schema->primary_key = {0};
    tables_.push_back(name);
    schemas_[name] = schema;
    Rows& rows = rows_[name];
    for (std::int64_t id = 1; id <= keys_; ++id) {
      if (random_.percent(50)) rows[id] = row(name, id);
    }
  }
  initial_ = rows_;
}

RowImage SimulatedBinlog::row(const std::string& table, std::int64_t id) {
  const std::int64_t v = next_value_++;
  RowImage image{Value(id), Value(v)};
  if (schemas_.at(table)->columns.size() == 3) image.emplace_back(Value(v % 7));
  return image;
}

ChangeEvent SimulatedBinlog::change(const std::string& table, Op op, std::optional<RowImage> before,
                                    std::optional<RowImage> after, std::uint32_t row_index) const {
  ChangeEvent event =
      testing::sim_change(schemas_.at(table), op, std::move(before), std::move(after), row_index, clock_.unix_millis());
  event.source.gtid = fmt::format("0-1-{}", next_sequence_);
  event.source.file = kFile;
  return event;
}

void SimulatedBinlog::run_transaction() {
  std::vector<std::string> touched = {random_.pick(tables_)};
  if (tables_.size() > 1 && random_.percent(50)) {
    const std::string& other = random_.pick(tables_);
    if (other != touched.front()) touched.push_back(other);
  }
  LoggedTransaction logged;
  std::uint32_t row_index = 0;
  for (const std::string& table : touched) {
    Rows& rows = rows_.at(table);
    const int changes = static_cast<int>(random_.between(1, 3));
    for (int n = 0; n < changes; ++n) {
      const auto id = static_cast<std::int64_t>(random_.between(1, static_cast<std::uint64_t>(keys_)));
      const auto found = rows.find(id);
      if (found == rows.end()) {
        RowImage after = row(table, id);
        rows[id] = after;
        logged.events.push_back(change(table, Op::kCreate, std::nullopt, std::move(after), row_index++));
        continue;
      }
      const std::uint64_t roll = random_.below(100);
      RowImage before = found->second;
      if (roll < 30) {
        rows.erase(found);
        logged.events.push_back(change(table, Op::kDelete, std::move(before), std::nullopt, row_index++));
        continue;
      }
      std::int64_t new_id = id;
      if (roll < 50) {  // the row moves to a free id (a primary-key change when the table has one)
        for (std::int64_t candidate = 1; candidate <= keys_ + 2; ++candidate) {
          if (!rows.contains(candidate)) {
            new_id = candidate;
            break;
          }
        }
      }
      RowImage after = row(table, new_id);
      rows.erase(found);
      rows[new_id] = after;
      logged.events.push_back(change(table, Op::kUpdate, std::move(before), std::move(after), row_index++));
    }
  }
  auto txn = next_transaction(100 + 50 * logged.events.size());
  for (ChangeEvent& event : logged.events) {
    event.source.end_pos = position_;
    event.event_id = make_event_id(event.source, event.op);
    txn->tables.push_back(event.source.database + "." + event.source.table);
  }
  std::sort(txn->tables.begin(), txn->tables.end());
  txn->tables.erase(std::unique(txn->tables.begin(), txn->tables.end()), txn->tables.end());
  logged.txn = std::move(txn);
  logged.after = rows_;
  log_.push_back(std::move(logged));
}

std::shared_ptr<SourceTransaction> SimulatedBinlog::next_transaction(std::uint64_t length) {
  position_ += length;
  auto txn = std::make_shared<SourceTransaction>();
  txn->server_id = 1;
  txn->gtid = fmt::format("0-1-{}", next_sequence_++);
  txn->file = kFile;
  txn->end_pos = position_;
  txn->commit_ts_ms = clock_.unix_millis();
  return txn;
}

void SimulatedBinlog::run_schema_change() {
  const std::string table = tables_.front();
  auto schema = std::make_shared<TableSchema>(*schemas_.at(table));
  BINBERG_ASSERT(schema->columns.size() == 2, "table {} changed its schema twice", table);
  schema->columns.push_back(column("w", SourceType::kInt));
  schemas_[table] = schema;
  for (auto& [id, image] : rows_.at(table)) image.emplace_back(Value());  // an added nullable column
  auto txn = next_transaction(200);
  txn->schema_change = SchemaChange{kDatabase, fmt::format("ALTER TABLE {} ADD COLUMN w INT", table)};
  txn->tables = {std::string(kDatabase) + "." + table};
  LoggedTransaction logged;
  logged.txn = std::move(txn);
  logged.after = rows_;
  log_.push_back(std::move(logged));
}

capture::SourcePosition SimulatedBinlog::end() const {
  capture::SourcePosition position;
  position.binlog = mysql::BinlogPosition{kFile, position_};
  if (next_sequence_ > 1) position.gtid = mysql::GtidPosition::parse(fmt::format("0-1-{}", next_sequence_ - 1));
  return position;
}

std::size_t SimulatedBinlog::first_after(const capture::SourcePosition& position) const {
  BINBERG_ASSERT(position.binlog.file == kFile, "position {} is not in the simulated binlog", position.to_string());
  std::size_t index = 0;
  while (index < log_.size() && log_[index].txn->end_pos <= position.binlog.offset) ++index;
  return index;
}

const Rows& SimulatedBinlog::rows_at(const std::string& table, const capture::SourcePosition& position) const {
  const std::size_t after = first_after(position);
  return after == 0 ? initial_.at(table) : log_[after - 1].after.at(table);
}

}  // namespace binberg::replicate::simulation
