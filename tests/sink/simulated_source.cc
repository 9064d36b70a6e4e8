#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "core/assert.h"
#include "envelope/change_envelope.h"
#include "envelope/transaction_footprint.h"
#include "sink/dead_letters.h"
#include "sink/sink_simulation.h"
#include "tables/schema_change.h"

namespace binberg::sink::simulation {
namespace {

constexpr const char* kFile = "bin.000001";

std::shared_ptr<const TableSchema> table_schema(const std::string& table, bool with_w) {
  auto schema = std::make_shared<TableSchema>();
  schema->database = "sim";
  schema->table = table;
  const auto column = [](std::string name, SourceType type, bool nullable) {
    Column made;
    made.name = std::move(name);
    made.type = type;
    made.nullable = nullable;
    return made;
  };
  schema->columns = {column("id", SourceType::kInt, false), column("v", SourceType::kBigInt, true)};
  if (with_w) schema->columns.push_back(column("w", SourceType::kInt, true));
  schema->primary_key = {0};
  return schema;
}

std::int64_t key_of(const RowImage& image) { return std::get<std::int64_t>(image.at(0)); }

}  // namespace

bool known_defects() { return std::getenv("BINBERG_SIMULATION_KNOWN_DEFECTS") != nullptr; }

Scenario Scenario::draw(SimRandom& random) {
  Scenario scenario;
  scenario.tables = static_cast<int>(random.between(1, 2));
  for (int table = 0; table < scenario.tables; ++table) {
    scenario.partitions.push_back(static_cast<std::int32_t>(random.between(1, 3)));
  }
  scenario.keys = static_cast<int>(random.between(2, 5));
  scenario.transactions = static_cast<int>(random.between(1, 5));
  scenario.at_least_once = random.percent(50);
  scenario.initial_copy = random.percent(40);
  scenario.abandoned_copy = scenario.initial_copy && scenario.at_least_once && random.percent(50);
  scenario.schema_change = random.percent(20);
  scenario.two_writers = random.percent(20);
  scenario.rewind = !scenario.two_writers && random.percent(15);
  scenario.damaged_percent = random.percent(30) ? static_cast<int>(random.between(5, 25)) : 0;
  scenario.miskeyed_percent = random.percent(20) ? static_cast<int>(random.between(5, 20)) : 0;
  scenario.crashes = static_cast<int>(random.between(0, 2));
  if (!known_defects()) {
    // A repeated transaction with a diverted record never ends; a quarantined change counts as
    // superseding a replayed one of its key (docs/kafka-sink.md, Not yet).
    if (scenario.at_least_once) scenario.damaged_percent = scenario.miskeyed_percent = 0;
    if (scenario.damaged_percent > 0) scenario.miskeyed_percent = 0;
  }
  return scenario;
}

std::string Scenario::to_string() const {
  return fmt::format(
      "{} tables (partitions {}), {} keys, {} transactions, {}{}{}{}{}{}{}, {}% damaged, {}% mis-keyed, {} crashes",
      tables, fmt::join(partitions, "/"), keys, transactions, at_least_once ? "at-least-once" : "exactly-once",
      initial_copy ? ", initial copy" : "", abandoned_copy ? " (abandoned once)" : "",
      schema_change ? ", schema change" : "", two_writers ? ", two writers" : "", rewind ? ", rewind" : "",
      deletes_records ? ", retention deletes records" : "", damaged_percent, miskeyed_percent, crashes);
}

void Topics::create(const std::string& topic, std::int32_t partitions) {
  for (std::int32_t partition = 0; partition < partitions; ++partition) logs_[{topic, partition}];
}

std::int32_t Topics::partitions(const std::string& topic) const {
  std::int32_t count = 0;
  for (const auto& [partition, log] : logs_) count += partition.first == topic ? 1 : 0;
  return count;
}

std::int64_t Topics::append(LogRecord record) {
  auto& log = logs_.at({record.record.topic, record.record.partition});
  record.record.offset = static_cast<std::int64_t>(log.size());
  log.push_back(std::move(record));
  return static_cast<std::int64_t>(log.size()) - 1;
}

std::int64_t Topics::end(const envelope::TopicPartition& partition) const {
  return static_cast<std::int64_t>(logs_.at(partition).size());
}

void Topics::delete_below(const envelope::TopicPartition& partition, std::int64_t offset) {
  std::int64_t& first = first_[partition];
  first = std::max(first, std::min(offset, end(partition)));
}

std::int64_t Topics::first(const envelope::TopicPartition& partition) const {
  const auto it = first_.find(partition);
  return it == first_.end() ? 0 : it->second;
}

const LogRecord& Topics::at(const envelope::TopicPartition& partition, std::int64_t offset) const {
  return logs_.at(partition).at(static_cast<std::size_t>(offset));
}

std::vector<envelope::TopicPartition> Topics::all() const {
  std::vector<envelope::TopicPartition> partitions;
  for (const auto& [partition, log] : logs_) partitions.push_back(partition);
  return partitions;
}

Source::Source(const Scenario& scenario, SimRandom& random, Topics& topics, SimClock& clock)
    : scenario_(scenario), random_(random), topics_(topics), clock_(clock) {
  for (int index = 0; index < scenario_.tables; ++index) {
    const std::string table = fmt::format("t{}", index);
    schemas_[table] = table_schema(table, false);
    rows_[table];
    topics_.create(topic_of(table), scenario_.partitions.at(static_cast<std::size_t>(index)));
    if (!scenario_.initial_copy) continue;
    for (std::int64_t key = 1; key <= scenario_.keys; ++key) {
      if (random_.percent(60)) rows_[table][key] = static_cast<std::int64_t>(++sequence_);
    }
  }
}

std::size_t Source::columns(const std::string& table) const { return schemas_.at(table)->columns.size(); }

std::int32_t Source::partition_of(const std::string& table, std::int64_t key) const {
  return static_cast<std::int32_t>(key % topics_.partitions(topic_of(table)));
}

RowImage Source::row(const std::string& table, std::int64_t key, std::int64_t v) const {
  RowImage image{Value(key), Value(v)};
  if (schemas_.at(table)->columns.size() == 3) image.emplace_back(Value(v % 7));
  return image;
}

ChangeEvent Source::change(const std::string& table, Op op, std::optional<RowImage> before,
                           std::optional<RowImage> after, std::uint32_t row_index) {
  ChangeEvent event =
      testing::sim_change(schemas_.at(table), op, std::move(before), std::move(after), row_index, clock_.unix_millis());
  event.source.file = kFile;
  event.source.end_pos = position_;
  return event;
}

void Source::add(Transaction& txn, const std::string& table, const ChangeEvent& event, const char* key_change) {
  Produced produced;
  produced.topic = topic_of(table);
  produced.partition = partition_of(table, key_of(primary_key_of(event)));
  kafka::ConsumedRecord& record = produced.record.record;
  record.topic = produced.topic;
  record.partition = produced.partition;
  record.key = fmt::format("key {}", key_of(primary_key_of(event)));
  record.value = "an Avro change record";
  record.headers = {
      kafka::Header{std::string(envelope::kEventIdHeader), event.event_id},
      kafka::Header{std::string(envelope::kPositionHeader),
                    fmt::format("{} {}:{}", event.source.gtid, event.source.file, event.source.end_pos)},
      kafka::Header{std::string(envelope::kTransactionHeader), txn.id},
  };
  if (key_change != nullptr)
    record.headers.push_back(kafka::Header{std::string(envelope::kKeyChangeHeader), key_change});
  produced.record.event = event;
  produced.record.key = primary_key_of(event);
  txn.records.push_back(std::move(produced));
}

void Source::initial_copy(bool abandon) {
  copied_ = true;
  position_ += 100;
  Transaction txn{fmt::format("snapshot:{}:{}", kFile, position_), {}};
  for (const auto& [table, rows] : rows_) {
    std::uint32_t row_index = 0;
    for (const auto& [key, v] : rows) {
      ChangeEvent event = change(table, Op::kSnapshot, std::nullopt, row(table, key, v), row_index++);
      event.event_id = make_event_id(event.source, event.op);
      events_[event.event_id] = SourceEvent{table, event, txn.id};
      add(txn, table, event, nullptr);
    }
  }
  if (abandon && txn.records.size() > 1) {
    // The source crashes half-way through its copy and, restarted after the tables changed, takes another.
    produce(txn, random_.below(txn.records.size()));
    abandoned_.insert(txn.id);
    for (auto& [table, rows] : rows_) {
      if (!rows.empty() && random_.percent(50)) rows.begin()->second = static_cast<std::int64_t>(++sequence_);
    }
    return initial_copy(false);
  }
  produce(txn);
  history_.push_back(std::move(txn));
  saved_ = history_.size();
}

Source::Transaction Source::next_transaction() {
  position_ += 100;
  Transaction txn{fmt::format("0-1-{}", position_ / 100), {}};
  const int changes = static_cast<int>(random_.between(1, 3));
  for (int index = 0; index < changes; ++index) {
    const std::string table = fmt::format("t{}", random_.below(static_cast<std::uint64_t>(scenario_.tables)));
    auto& rows = rows_.at(table);
    const std::int64_t key = random_.between(1, scenario_.keys);
    const auto v = static_cast<std::int64_t>(++sequence_);
    const auto row_index = static_cast<std::uint32_t>(index);
    std::optional<std::int64_t> free_key;
    for (std::int64_t other = 1; other <= scenario_.keys; ++other) {
      if (!rows.contains(other)) free_key = other;
    }
    ChangeEvent event;
    bool key_changed = false;  // a primary-key update: the source produces it as two halves
    if (!rows.contains(key)) {
      event = change(table, Op::kCreate, std::nullopt, row(table, key, v), row_index);
      rows[key] = v;
    } else if (const auto pick = random_.below(10); pick < 2) {
      event = change(table, Op::kDelete, row(table, key, rows[key]), std::nullopt, row_index);
      rows.erase(key);
    } else if (pick < 4 && free_key) {
      event = change(table, Op::kUpdate, row(table, key, rows[key]), row(table, *free_key, v), row_index);
      rows.erase(key);
      rows[*free_key] = v;
      key_changed = true;
    } else {
      event = change(table, Op::kUpdate, row(table, key, rows[key]), row(table, key, v), row_index);
      rows[key] = v;
    }
    event.source.gtid = txn.id;
    event.event_id = make_event_id(event.source, event.op);
    events_[event.event_id] = SourceEvent{table, event, txn.id};
    if (!key_changed) {
      add(txn, table, event, nullptr);
      continue;
    }
    ChangeEvent old_key = event, new_key = event;  // as binberg source splits it (publish/kafka_source.cc)
    old_key.op = Op::kDelete;
    old_key.after.reset();
    new_key.op = Op::kCreate;
    new_key.before.reset();
    add(txn, table, old_key, "old");
    add(txn, table, new_key, "new");
  }
  return txn;
}

Source::Transaction Source::schema_change_transaction() {
  position_ += 100;
  Transaction txn{fmt::format("0-1-{}", position_ / 100), {}};
  const std::string table = "t0";
  schemas_[table] = table_schema(table, true);
  const std::string change =
      tables::PublishedSchemaChange{"sim", "ALTER TABLE t0 ADD COLUMN w INT", schemas_[table]}.to_json();
  for (std::int32_t partition = 0; partition < topics_.partitions(topic_of(table)); ++partition) {
    Produced produced;
    produced.topic = topic_of(table);
    produced.partition = partition;
    produced.record.record.topic = produced.topic;
    produced.record.record.partition = partition;
    produced.record.record.headers = {
        kafka::Header{std::string(envelope::kPositionHeader), fmt::format("{} {}:{}", txn.id, kFile, position_)},
        kafka::Header{std::string(envelope::kTransactionHeader), txn.id},
        kafka::Header{std::string(envelope::kSchemaChangeHeader), change}};
    txn.records.push_back(std::move(produced));
  }
  return txn;
}

void Source::produce(const Transaction& txn, std::optional<std::size_t> cut) {
  envelope::Footprint footprint;
  std::map<envelope::TopicPartition, LogRecord> held;  // each partition's last record until the end
  std::size_t produced = 0;
  for (const Produced& entry : txn.records) {
    if (cut && produced == *cut) return;  // the source crashed: what it held is lost
    ++produced;
    const envelope::TopicPartition partition{entry.topic, entry.partition};
    ++footprint[partition];
    LogRecord record = entry.record;
    record.record.timestamp_ms = clock_.unix_millis();
    // A damaged value (the source's kafka_source.poison_value), never in a primary-key update's halves.
    const bool plain = record.event && std::none_of(record.record.headers.begin(), record.record.headers.end(),
                                                    [](const kafka::Header& header) {
                                                      return header.name == envelope::kKeyChangeHeader;
                                                    });
    if (faults_ && plain && random_.percent(static_cast<std::uint64_t>(scenario_.damaged_percent))) {
      record.damaged = true;
    } else if (faults_ && plain && random_.percent(static_cast<std::uint64_t>(scenario_.miskeyed_percent))) {
      record.key = RowImage{Value(key_of(*record.key) + 1000)};
    }
    if (auto it = held.find(partition); it != held.end()) {
      topics_.append(std::move(it->second));
      it->second = std::move(record);
    } else {
      held.emplace(partition, std::move(record));
    }
  }
  const std::string text = envelope::format_footprint(footprint);
  for (auto& [partition, record] : held) {
    record.record.headers.push_back(kafka::Header{std::string(envelope::kTransactionEndHeader), text});
    topics_.append(std::move(record));
  }
}

void Source::repeat_unsaved() {
  for (std::size_t index = saved_; index < history_.size(); ++index) produce(history_[index]);
  if (in_flight_) {
    produce(*in_flight_);
    history_.push_back(std::move(*in_flight_));
    in_flight_.reset();
  }
  saved_ = history_.size();
}

void Source::step() {
  if (scenario_.initial_copy && !copied_) return initial_copy(scenario_.abandoned_copy && faults_);
  if (in_flight_) return repeat_unsaved();  // the source restarted after a crash in a transaction
  if (scenario_.at_least_once) {
    if (faults_ && saved_ < history_.size() && random_.percent(15)) return repeat_unsaved();  // crashed after it
    if (random_.percent(40)) saved_ = history_.size();
  }
  if (ran_ >= scenario_.transactions) return;
  Transaction txn;
  if (scenario_.schema_change && !changed_schema_ && ran_ >= scenario_.transactions / 2) {
    txn = schema_change_transaction();
    changed_schema_ = true;
  } else {
    txn = next_transaction();
    ++ran_;
  }
  if (scenario_.at_least_once && faults_ && random_.percent(10)) {
    produce(txn, random_.below(txn.records.size() + 1));  // it crashes in the middle
    in_flight_ = std::move(txn);
    return;
  }
  produce(txn);
  history_.push_back(std::move(txn));
  if (!scenario_.at_least_once) saved_ = history_.size();
}

void Source::finish() {
  faults_ = false;
  while (!done() || (scenario_.initial_copy && !copied_)) step();
  repeat_unsaved();
}

void Source::replay(const envelope::TopicPartition& partition, std::int64_t offset) {
  const LogRecord& dead = topics_.at(partition, offset);
  BINBERG_ASSERT(dead.damaged && dead.event, "{} [{}] offset {} is no dead letter to replay", partition.first,
                 partition.second, offset);
  LogRecord replay = dead;
  replay.damaged = false;
  std::erase_if(replay.record.headers, [](const kafka::Header& header) {
    return header.name == envelope::kTransactionHeader || header.name == envelope::kTransactionEndHeader;
  });
  replay.record.headers.push_back(
      kafka::Header{std::string(kReplayOfHeader), RecordOrigin{partition.first, partition.second, offset}.to_string()});
  replay.record.timestamp_ms = clock_.unix_millis();
  topics_.append(std::move(replay));
}

}  // namespace binberg::sink::simulation
