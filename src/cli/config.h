#pragma once

// binberg's configuration file (TOML). Every option, its default and its meaning is in
// docs/configuration.md; a minimal file:
//
//   [source]
//   host = "127.0.0.1"
//   port = 3306
//   user = "binberg"
//   password_env = "BINBERG_SOURCE_PASSWORD"
//   server_id = 4201
//
//   [capture]
//   include = ["shop.*"]
//
//   [iceberg]
//   catalog_uri = "sqlite:////var/lib/binberg/catalog.db"
//   warehouse = "/var/lib/binberg/warehouse"
//
// Secrets are never in the file itself: passwords come from an environment variable
// (`password_env`) or a file (`password_file`, which must not be readable by others).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "iceberg/catalog.h"
#include "mysql/connection.h"
#include "publish/kafka_source.h"
#include "replicate/replicator.h"
#include "sink/kafka_sink.h"

namespace binberg::cli {

struct CaptureRules {
  // Glob patterns over "database.table" ('*' any run of characters, '?' one character).
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool matches(const std::string& database, const std::string& table) const;
};

// Memory bounds (docs/configuration.md, [memory]).
struct MemoryLimits {
  std::size_t transaction_buffer_bytes = 64u << 20;  // a transaction's encoded rows; spooled beyond
  std::string spool_dir;                             // empty: $TMPDIR or /tmp
  std::size_t queue_events = 65'536;                 // decoded row events between reader and applier
  std::size_t writer_buffer_bytes = 256u << 20;      // per Iceberg table writer
  std::size_t index_bytes = std::size_t{2} << 30;    // per table's primary-key index; keys are
                                                     // located by scan beyond it
};

// Path B (docs/configuration.md, [kafka] and [registry]).
struct KafkaConfig {
  kafka::ClientOptions client;  // bootstrap_servers, [kafka.properties], the SASL password
  registry::RegistryOptions registry;
  std::string topic_prefix = "binberg";
  std::int32_t partitions = 1;
  std::int16_t replication_factor = 1;
  publish::Delivery delivery = publish::Delivery::kExactlyOnce;
  std::string source_name = "binberg";
  std::string offsets_topic;  // empty: "<topic_prefix>.binberg.offsets"
  std::uint32_t max_retries = 0;
  // When the source saves its positions (a Kafka transaction in exactly-once mode): short, since
  // read_committed consumers see nothing of a transaction before it commits.
  std::chrono::milliseconds save_interval{100};
  std::size_t save_max_records = 50'000;
  // `binberg sink` ([sink]).
  std::vector<std::string> sink_topics;
  std::string sink_group = "binberg-sink";
  bool sink_scale_out = false;
  std::chrono::milliseconds sink_member_timeout{10'000};
  std::chrono::milliseconds sink_stall_timeout{300'000};
  // `<topic>.dlq` and `<topic>.quarantine` (sink/dead_letter_topics.h).
  std::optional<std::int16_t> sink_dead_letter_replication_factor;  // none: the table topic's
  std::int64_t sink_dead_letter_retention_ms = -1;                  // -1: for ever
  bool sink_allow_finite_dead_letter_retention = false;
};

struct Config {
  mysql::ConnectionOptions source;
  std::uint32_t server_id = 0;
  CaptureRules capture;
  iceberg::CatalogOptions catalog;
  std::string iceberg_namespace;
  std::string changelog_suffix = "_changelog";
  capture::CommitPolicy commit;
  std::string writer_id = "binberg";
  std::size_t snapshot_chunk_rows = 10'000;
  tables::TypeMapping types;  // [types]
  MemoryLimits memory;
  KafkaConfig kafka;
  std::string metrics_address;  // host:port of the Prometheus endpoint; empty: none
  std::string path;             // the file this came from, for messages
};

// Reads and validates PATH. Throws ConfigError naming the file, the key and what is wrong.
Config load_config(const std::string& path);
// The same from TOML text (PATH only names it in messages).
Config parse_config(const std::string& text, const std::string& path);

// The source tables the rules select, from information_schema (base tables only), sorted.
std::vector<capture::CapturedTable> resolve_tables(mysql::Connection& connection, const CaptureRules& rules);

// Why binberg does not replicate the captured TABLE, whose source definition is SCHEMA: it cannot
// map it onto Iceberg tables under CONFIG's [types] (tables::UnmappableTable) and so made none in
// CATALOG. nullopt when it can, or when the tables exist (a table keeps the types it was made with).
std::optional<std::string> stopped_reason(const Config& config, iceberg::Catalog& catalog,
                                          const capture::CapturedTable& table, const TableSchema& schema);

// Replicator options from CONFIG and the resolved TABLES; throws ConfigError when CONFIG has no
// [iceberg] catalog.
replicate::ReplicatorOptions replicator_options(const Config& config, std::vector<capture::CapturedTable> tables);

// `binberg source` options from CONFIG and the resolved TABLES; throws ConfigError when CONFIG
// names no Kafka broker or registry.
publish::KafkaSourceOptions kafka_source_options(const Config& config, std::vector<capture::CapturedTable> tables);

// `binberg sink` options from CONFIG; throws ConfigError when CONFIG names no broker, registry,
// catalog or topics.
sink::KafkaSinkOptions kafka_sink_options(const Config& config);

}  // namespace binberg::cli
