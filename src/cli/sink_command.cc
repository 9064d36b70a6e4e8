// `binberg sink --config FILE`: path B's second half, Kafka -> Iceberg, until SIGTERM/SIGINT (a
// graceful stop commits the transactions that are whole and exits 0) or an error it cannot get
// past (exit 1; nothing lost: the tables record the offsets a restart resumes from). A schema
// change the policy refuses stops its table only; with none left to write, the sink exits 2.
//
// `--from earliest|offset:N` reads the topics again from there (what the tables hold is counted as
// redelivered and skipped). `--rebuild NAMESPACE --from ...` rebuilds the tables into fresh ones in
// NAMESPACE (sink/sink_rebuild.h), prints how they compare with the originals and exits 0 when
// they are equal, 3 when not.

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/config.h"
#include "core/error.h"
#include "iceberg/catalog.h"
#include "sink/kafka_sink.h"
#include "sink/sink_rebuild.h"

namespace binberg::cli {
namespace {

struct SinkArgs {
  std::string config;
  std::string from;
  std::string rebuild;
  std::vector<std::string> accepted_schema_changes;
  bool json = false;
};

int run_sink(const SinkArgs& args) {
  const Config config = load_config(args.config);
  sink::KafkaSinkOptions options = kafka_sink_options(config);
  options.accepted_schema_changes = args.accepted_schema_changes;
  const auto catalog = iceberg::open_catalog(config.catalog);
  if (!args.rebuild.empty() && args.from.empty()) throw ConfigError("--rebuild needs --from");
  const auto from = args.from.empty() ? sink::RebuildFrom{} : sink::RebuildFrom::parse(args.from);
  if (!args.rebuild.empty()) {
    options.iceberg_namespace = args.rebuild;
    options.group_id += ".rebuild." + args.rebuild;  // its own group: the original's stays the original's
    options.rebuild = sink::plan_rebuild(*catalog, options, from);
  } else if (!args.from.empty()) {
    if (from.kind == sink::RebuildFrom::Kind::kTimestamp) {
      throw ConfigError("--from timestamp: needs --rebuild (a sink reads its own tables again by offset)");
    }
    options.read_from = from.kind == sink::RebuildFrom::Kind::kEarliest ? sink::kEarliestOffset : from.value;
  }
  metrics::Registry registry;
  const auto exporter = export_metrics(registry, config.metrics_address);
  options.metrics = &registry;
  const auto plan = options.rebuild;
  sink::KafkaSink sink(std::move(options), *catalog);
  sink.run(stop_on_signals());
  const auto& stats = sink.stats();
  spdlog::info(
      "sink: {} records, {} changes applied, {} redelivered (by offset {}, by position {}), {} dead letters, {} "
      "quarantined, replays: {} applied, {} superseded, {} duplicate; {} schema changes, {} commits, {} rollbacks",
      stats.records, stats.applied, stats.redelivered_by_offset + stats.redelivered_by_position,
      stats.redelivered_by_offset, stats.redelivered_by_position, stats.dead_letters, stats.quarantined,
      stats.replays_applied, stats.replays_superseded, stats.replays_duplicate, stats.schema_changes, stats.commits,
      stats.rollbacks);
  if (!stats.stopped_tables.empty()) {
    spdlog::error("sink: stopped tables (a refused schema change, or unmappable; the log says why): {}",
                  fmt::join(stats.stopped_tables, ", "));
  }
  if (args.rebuild.empty()) return 0;
  if (!stats.rebuilt) {
    spdlog::warn("sink: the rebuild stopped before it reached the original's offsets; run it again to go on");
    return 1;
  }
  const sink::RebuildReport report = sink::compare_rebuild(*catalog, plan, args.rebuild);
  std::cout << (args.json ? report.to_json().dump(2) + "\n" : report.to_text());
  return report.equal() ? 0 : 3;
}

}  // namespace

Command add_sink_command(CLI::App& app) {
  auto* command = app.add_subcommand("sink", "Apply Kafka change records to Iceberg tables (path B)");
  auto args = std::make_shared<SinkArgs>();
  command->add_option("-c,--config", args->config, "configuration file (TOML, see docs/configuration.md)")->required();
  command->add_option("--from", args->from,
                      "read again from earliest|offset:<n> (with --rebuild also timestamp:<ms|YYYY-MM-DDTHH:MM:SSZ>)");
  command->add_option("--rebuild", args->rebuild,
                      "rebuild the tables into fresh ones in this namespace, then compare them by digest");
  command->add_flag("--json", args->json, "print the rebuild's comparison as JSON");
  command->add_option("--accept-schema-change", args->accepted_schema_changes,
                      "apply a schema change the policy refused (its GTID, or file:pos), keeping the Iceberg column "
                      "types where the new values fit (docs/schema-evolution.md); repeatable");
  return Command{command, [args] { return run_sink(*args); }};
}

}  // namespace binberg::cli
