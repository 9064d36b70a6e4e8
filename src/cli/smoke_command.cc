// `binberg smoke`: one round trip through every real service of the local stack, the first thing
// a newcomer runs. Each step checks its own outcome and the command fails on the first mismatch.

#include <arrow/api.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>

#include "cli/commands.h"
#include "core/clock.h"
#include "core/error.h"
#include "iceberg/parquet_file.h"
#include "kafka/admin.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"
#include "lab/endpoints.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "registry/registry_client.h"

namespace binberg::cli {
namespace {

struct SmokeArgs {
  std::string dir;
  int rows = 3;
};

struct ItemRow {
  std::int64_t id;
  std::string name;
  std::string price;
};

class StepTimer {
 public:
  explicit StepTimer(std::string name) : name_(std::move(name)) {}
  void done(const std::string& detail) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_);
    fmt::print("ok  {:<10} {} ({} ms)\n", name_, detail, ms.count());
  }

 private:
  std::string name_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::vector<ItemRow> write_source_rows(mysql::Connection& db, int rows, mysql::BinlogPosition& before) {
  db.execute("DROP TABLE IF EXISTS smoke_items");
  db.execute("CREATE TABLE smoke_items (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL, price DECIMAL(10,2))");
  auto status = db.query("SHOW MASTER STATUS");
  if (status.rows.empty()) fail("mariadb: SHOW MASTER STATUS is empty: binary logging is off");
  before = mysql::BinlogPosition{*status.rows[0][0], std::stoull(*status.rows[0][1])};
  db.execute("START TRANSACTION");
  for (int i = 1; i <= rows; ++i) {
    db.execute(fmt::format("INSERT INTO smoke_items VALUES ({}, 'item-{}', {}.{:02})", i, i, i * 10, i));
  }
  db.execute("COMMIT");
  std::vector<ItemRow> result;
  for (const auto& row : db.query("SELECT id, name, price FROM smoke_items ORDER BY id").rows) {
    result.push_back(ItemRow{std::stoll(*row[0]), *row[1], *row[2]});
  }
  if (static_cast<int>(result.size()) != rows) fail("mariadb: wrote {} rows, read back {}", rows, result.size());
  return result;
}

std::string read_transaction(const lab::MariadbEndpoint& maria, const mysql::BinlogPosition& from) {
  mysql::StreamOptions options;
  options.connection = lab::mariadb_options(maria, lab::MariadbRole::kReplication);
  options.server_id = 4242;
  options.start_position = from;
  options.blocking = false;
  auto stream = mysql::BinlogStream::open(options);
  std::string gtid;
  std::size_t row_events = 0;
  bool committed = false;
  while (auto event = stream.next()) {
    if (event->kind == mysql::EventKind::kGtid) gtid = event->gtid->to_string();
    if (event->kind == mysql::EventKind::kWriteRows) ++row_events;
    if (event->kind == mysql::EventKind::kXid && row_events > 0) committed = true;
  }
  if (!committed) fail("binlog: no committed transaction with rows after {}", from.to_string());
  return fmt::format("transaction {} with {} rows event(s), ends at {}", gtid, row_events,
                     stream.position().to_string());
}

std::string kafka_round_trip(const std::string& bootstrap, const std::vector<ItemRow>& rows) {
  kafka::ClientOptions client{bootstrap, {}};
  const std::string topic = fmt::format("binberg.smoke.{}", unix_millis());
  kafka::create_topic(client, kafka::TopicSpec{topic, 1, 1, {}});
  auto producer = kafka::Producer::create(client, kafka::ProducerMode::kTransactional, "binberg-smoke");
  producer.begin_transaction();
  for (const auto& row : rows) {
    producer.send(kafka::OutgoingRecord{topic, 0, std::to_string(row.id), row.name + "," + row.price, {}});
  }
  producer.commit_transaction();

  auto consumer = kafka::Consumer::create(kafka::ConsumerOptions{client, "binberg-smoke", true});
  consumer.assign({kafka::PartitionStart{topic, 0, 0}});
  std::size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (seen < rows.size() && std::chrono::steady_clock::now() < deadline) {
    if (auto record = consumer.poll(std::chrono::milliseconds(500))) {
      const ItemRow& expected = rows[seen];
      if (record->key != std::to_string(expected.id)) fail("kafka: record {} has key {}", seen, *record->key);
      ++seen;
    }
  }
  if (seen != rows.size()) fail("kafka: read {} of {} committed records from {}", seen, rows.size(), topic);
  return fmt::format("{} records through {} (transactional, read_committed)", seen, topic);
}

std::string register_schema(const std::string& url) {
  registry::RegistryClient client(registry::RegistryOptions{url});
  const std::string schema =
      R"({"type":"record","name":"SmokeItem","namespace":"binberg.smoke","fields":[)"
      R"({"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"price","type":["null","string"]}]})";
  const auto id = client.register_schema(registry::value_subject("binberg.smoke.items"), schema);
  return fmt::format("schema id {} for subject binberg.smoke.items-value", id);
}

std::string parquet_round_trip(const std::string& dir, const std::vector<ItemRow>& rows) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  arrow::StringBuilder prices;
  for (const auto& row : rows) {
    if (!ids.Append(row.id).ok() || !names.Append(row.name).ok() || !prices.Append(row.price).ok()) {
      fail("parquet: out of memory building the batch");
    }
  }
  using iceberg::Nullable;
  auto schema = arrow::schema({iceberg::field_with_id("id", arrow::int64(), Nullable::kNo, 1),
                               iceberg::field_with_id("name", arrow::utf8(), Nullable::kNo, 2),
                               iceberg::field_with_id("price", arrow::utf8(), Nullable::kYes, 3)});
  auto table = arrow::Table::Make(
      schema, {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie(), prices.Finish().ValueOrDie()});
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/smoke_items.parquet";
  std::filesystem::remove(path);
  auto info = iceberg::write_parquet(path, *table);
  auto back = iceberg::read_parquet(path);
  if (!back->Equals(*table)) fail("parquet: {} does not read back as written", path);
  return fmt::format("{} rows, {} bytes in {}", info.rows, info.file_size_bytes, path);
}

int run_smoke(const SmokeArgs& args) {
  const auto endpoints = lab::load(args.dir.empty() ? lab::default_dir() : args.dir);
  const auto& maria = endpoints.mariadb();
  fmt::print("binberg smoke: services in {}\n", endpoints.dir);

  StepTimer mariadb_step("mariadb");
  auto db = mysql::Connection::open(lab::mariadb_options(maria, lab::MariadbRole::kAdmin));
  mysql::BinlogPosition before;
  auto rows = write_source_rows(db, args.rows, before);
  mariadb_step.done(fmt::format("{} rows committed to {}.smoke_items", rows.size(), maria.database));

  StepTimer binlog_step("binlog");
  binlog_step.done(read_transaction(maria, before));

  StepTimer kafka_step("kafka");
  kafka_step.done(kafka_round_trip(endpoints.kafka_bootstrap_servers(), rows));

  StepTimer registry_step("registry");
  registry_step.done(register_schema(endpoints.registry_url()));

  StepTimer parquet_step("parquet");
  parquet_step.done(parquet_round_trip(endpoints.dir + "/smoke", rows));

  fmt::print("binberg smoke: all services answered correctly\n");
  return 0;
}

}  // namespace

Command add_smoke_command(CLI::App& app) {
  auto args = std::make_shared<SmokeArgs>();
  CLI::App* command =
      app.add_subcommand("smoke", "Round trip through MariaDB, its binlog, Kafka, the registry and Parquet");
  command->add_option("--dir", args->dir, "services dir (default $BINBERG_SERVICES_DIR or <source>/.services)");
  command->add_option("--rows", args->rows, "rows to write")->capture_default_str()->check(CLI::Range(1, 100000));
  return {command, [args] { return run_smoke(*args); }};
}

}  // namespace binberg::cli
