// `binberg sink --config FILE`: path B's second half, Kafka -> Iceberg, until SIGTERM/SIGINT (a
// graceful stop commits the transactions that are whole and exits 0) or an error it cannot get
// past (exit 1; nothing lost: the tables record the offsets a restart resumes from).

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "iceberg/catalog.h"
#include "pipeline/config.h"
#include "pipeline/kafka_sink.h"

namespace binberg::cli {
namespace {

int run_sink(const std::string& config_path) {
  const pipeline::Config config = pipeline::load_config(config_path);
  pipeline::KafkaSinkOptions options = pipeline::kafka_sink_options(config);
  const auto catalog = iceberg::open_catalog(config.catalog);
  metrics::Registry registry;
  const auto exporter = export_metrics(registry, config.metrics_address);
  options.metrics = &registry;
  pipeline::KafkaSink sink(std::move(options), *catalog);
  sink.run(stop_on_signals());
  const auto& stats = sink.stats();
  spdlog::info(
      "sink: {} records, {} changes applied, {} redelivered (by offset {}, by position {}), {} dead letters, {} "
      "quarantined, {} commits, {} rollbacks",
      stats.records, stats.applied, stats.redelivered_by_offset + stats.redelivered_by_position,
      stats.redelivered_by_offset, stats.redelivered_by_position, stats.dead_letters, stats.quarantined, stats.commits,
      stats.rollbacks);
  return 0;
}

}  // namespace

Command add_sink_command(CLI::App& app) {
  auto* command = app.add_subcommand("sink", "Apply Kafka change records to Iceberg tables (path B)");
  auto config = std::make_shared<std::string>();
  command->add_option("-c,--config", *config, "configuration file (TOML, see docs/configuration.md)")->required();
  return Command{command, [config] { return run_sink(*config); }};
}

}  // namespace binberg::cli
