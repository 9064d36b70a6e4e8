#include "mysql/binlog_stream.h"
#include "mysql/charset.h"
#include "mysql/source_checks.h"
#include "replicate/replicator_ports.h"

namespace binberg::replicate {
namespace {

class MariadbSnapshot final : public SnapshotInput {
 public:
  explicit MariadbSnapshot(mysql::TableSnapshot snapshot)
      : snapshot_(std::move(snapshot)), position_{snapshot_.position().binlog, snapshot_.position().gtid} {}
  capture::SourcePosition position() const override { return position_; }
  const std::vector<std::shared_ptr<const TableSchema>>& schemas() const override { return snapshot_.schemas(); }
  std::vector<ChangeEvent> next_chunk() override { return snapshot_.next_chunk(); }
  std::uint64_t rows_read() const override { return snapshot_.rows_read(); }

 private:
  mysql::TableSnapshot snapshot_;
  capture::SourcePosition position_;
};

class MariadbStream final : public StreamInput {
 public:
  MariadbStream(mysql::StreamOptions stream, mysql::CharsetNames charsets, capture::SourceReaderOptions options,
                capture::SourceReaderMetrics& metrics)
      : reader_(std::move(stream), std::move(charsets), std::move(options), metrics) {}
  std::optional<capture::TransactionBatch> next(std::chrono::milliseconds timeout) override {
    return reader_.next(timeout);
  }

 private:
  capture::SourceReader reader_;
};

class MariadbSource final : public ReplicatorSource {
 public:
  MariadbSource(MariadbSourceOptions options, capture::SourceReaderMetrics& metrics)
      : options_(std::move(options)), metrics_(metrics) {}

  void check_ready() override {
    mysql::Connection connection = mysql::Connection::open(options_.connection);
    mysql::require_cdc_ready(connection);
  }
  std::shared_ptr<const TableSchema> table_schema(const std::string& database, const std::string& table) override {
    mysql::Connection connection = mysql::Connection::open(options_.connection);
    return mysql::load_table_schema(connection, database, table);
  }
  std::unique_ptr<SnapshotInput> snapshot(const std::vector<mysql::TableName>& tables,
                                          std::size_t chunk_rows) override {
    return std::make_unique<MariadbSnapshot>(mysql::TableSnapshot::open(options_.connection, tables, chunk_rows));
  }
  std::unique_ptr<StreamInput> stream(const capture::SourcePosition& start) override {
    mysql::Connection connection = mysql::Connection::open(options_.connection);
    mysql::require_position_available(connection, start.binlog);
    mysql::StreamOptions stream;
    stream.connection = options_.connection;
    stream.server_id = options_.server_id;
    stream.start_position = start.binlog;
    stream.blocking = true;
    stream.heartbeat = options_.heartbeat;
    return std::make_unique<MariadbStream>(std::move(stream), mysql::CharsetNames::load(connection), options_.reader,
                                           metrics_);
  }

 private:
  MariadbSourceOptions options_;
  capture::SourceReaderMetrics& metrics_;
};

}  // namespace

std::unique_ptr<ReplicatorSource> mariadb_source(MariadbSourceOptions options, capture::SourceReaderMetrics& metrics) {
  return std::make_unique<MariadbSource>(std::move(options), metrics);
}

}  // namespace binberg::replicate
