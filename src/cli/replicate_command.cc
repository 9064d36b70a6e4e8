// `binberg replicate --config FILE`: path A, binlog -> Iceberg, until SIGTERM/SIGINT (a graceful
// stop commits what was read and exits 0) or an error (exit 1; nothing lost: the tables hold
// their last committed position and a restart resumes from it).

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/config.h"
#include "core/error.h"
#include "iceberg/catalog.h"
#include "replicate/replicator.h"

namespace binberg::cli {
namespace {

int run_replicate(const std::string& config_path, const std::vector<std::string>& accepted_schema_changes) {
  const Config config = load_config(config_path);
  mysql::Connection connection = mysql::Connection::open(config.source);
  std::vector<capture::CapturedTable> tables = resolve_tables(connection, config.capture);
  if (tables.empty()) {
    throw ConfigError(fmt::format("{}: [capture] selects no table on {}", config.path, config.source.address()));
  }
  for (const auto& table : tables) spdlog::info("capturing {}", table.qualified_name());
  const auto catalog = iceberg::open_catalog(config.catalog);
  metrics::Registry registry;
  const auto exporter = export_metrics(registry, config.metrics_address);
  replicate::ReplicatorOptions options = replicator_options(config, std::move(tables));
  options.metrics = &registry;
  options.accepted_schema_changes = accepted_schema_changes;
  replicate::Replicator replicator(std::move(options), *catalog);

  replicator.run(stop_on_signals());
  const auto& stats = replicator.stats();
  spdlog::info("replicate: {} transactions, {} events, {} snapshot rows, {} commits; last position {}",
               stats.transactions, stats.events, stats.snapshot_rows, stats.commits, stats.position);
  for (const std::string& stopped : stats.stopped_tables) spdlog::error("replicate: not replicated: {}", stopped);
  return 0;
}

}  // namespace

Command add_replicate_command(CLI::App& app) {
  auto* command = app.add_subcommand("replicate", "Replicate MySQL/MariaDB tables into Iceberg tables (path A)");
  auto config = std::make_shared<std::string>();
  command->add_option("-c,--config", *config, "configuration file (TOML, see docs/configuration.md)")->required();
  auto accepted = std::make_shared<std::vector<std::string>>();
  command->add_option("--accept-schema-change", *accepted,
                      "apply a schema change the policy refused (its GTID, or file:pos), keeping the Iceberg column "
                      "types where the new values fit (docs/schema-evolution.md); repeatable");
  return Command{command, [config, accepted] { return run_replicate(*config, *accepted); }};
}

}  // namespace binberg::cli
