// `binberg source --config FILE`: path B's first half, binlog -> Kafka, until SIGTERM/SIGINT (a
// graceful stop saves what it produced and exits 0) or an error it cannot get past (exit 1;
// nothing lost: the saved positions say where a restart resumes).

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <string>

#include "cli/commands.h"
#include "cli/config.h"
#include "core/error.h"
#include "publish/kafka_source.h"

namespace binberg::cli {
namespace {

int run_source(const std::string& config_path) {
  const Config config = load_config(config_path);
  mysql::Connection connection = mysql::Connection::open(config.source);
  std::vector<capture::CapturedTable> tables = resolve_tables(connection, config.capture);
  if (tables.empty()) {
    throw ConfigError(fmt::format("{}: [capture] selects no table on {}", config.path, config.source.address()));
  }
  publish::KafkaSourceOptions options = kafka_source_options(config, std::move(tables));
  for (const auto& table : options.tables) {
    spdlog::info("capturing {} into topic {}", table.qualified_name(),
                 publish::change_topic(options.topic_prefix, table));
  }
  metrics::Registry registry;
  const auto exporter = export_metrics(registry, config.metrics_address);
  options.metrics = &registry;
  publish::KafkaSource source(std::move(options));
  source.run(stop_on_signals());
  const auto& stats = source.stats();
  spdlog::info("source: {} transactions, {} records ({} snapshot rows), {} saves, {} restarts", stats.transactions,
               stats.records, stats.snapshot_rows, stats.commits, stats.restarts);
  return 0;
}

}  // namespace

Command add_source_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("source", "Publish MySQL/MariaDB changes to Kafka as Avro change records (path B)");
  auto config = std::make_shared<std::string>();
  command->add_option("-c,--config", *config, "configuration file (TOML, see docs/configuration.md)")->required();
  return Command{command, [config] { return run_source(*config); }};
}

}  // namespace binberg::cli
