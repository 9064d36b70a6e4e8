// `binberg reconcile --config FILE [--table db.t]...`: compares source tables with their Iceberg
// tables at one consistent point and prints the verdict (text, or JSON with --json). Exit code 0
// when every table is equal and every check ran (or was skipped as asked: --no-audit), 3 on any
// difference or a captured table binberg does not replicate (it cannot map it: "stopped"), 4 when
// nothing differs but a check could not run (docs/reconcile.md).

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "cli/config.h"
#include "core/assert.h"
#include "core/error.h"
#include "iceberg/catalog.h"
#include "mysql/snapshot_reader.h"
#include "verify/reconcile.h"

namespace binberg::cli {
namespace {

constexpr int kExitDifferent = 3;
constexpr int kExitIncomplete = 4;

struct ReconcileArgs {
  std::string config;
  std::vector<std::string> tables;
  bool json = false;
  bool audit = true;
  int wait_seconds = 120;
  std::size_t examples = 10;
};

int run_reconcile(const ReconcileArgs& args) {
  const Config config = load_config(args.config);
  mysql::Connection connection = mysql::Connection::open(config.source);
  std::vector<capture::CapturedTable> tables;
  if (args.tables.empty()) {
    tables = resolve_tables(connection, config.capture);
  } else {
    for (const auto& name : args.tables) {
      const auto dot = name.find('.');
      if (dot == std::string::npos) throw ConfigError(fmt::format("--table {}: expected database.table", name));
      tables.push_back(capture::CapturedTable{name.substr(0, dot), name.substr(dot + 1)});
    }
  }
  const auto catalog = iceberg::open_catalog(config.catalog);
  nlohmann::json reports = nlohmann::json::array();
  verify::Verdict verdict = verify::Verdict::kEqual;
  for (const auto& table : tables) {
    // A table binberg cannot map has no Iceberg tables to compare with: reported, and not equal.
    const auto source_schema = mysql::load_table_schema(connection, table.database, table.table);
    if (const auto stopped = stopped_reason(config, *catalog, table, *source_schema)) {
      verdict = verify::combine(verdict, verify::Verdict::kDifferent);
      if (args.json) {
        reports.push_back(
            {{"verdict", "stopped"}, {"source", {{"table", table.qualified_name()}}}, {"reason", *stopped}});
      } else {
        std::cout << fmt::format("{}: STOPPED, not replicated: {}\n", table.qualified_name(), *stopped);
      }
      continue;
    }
    verify::ReconcileOptions options;
    options.source = config.source;
    options.server_id = config.server_id + 1'000'000;  // its own replica id, apart from replicate's
    options.table = table;
    const std::string ns = config.iceberg_namespace.empty() ? table.database : config.iceberg_namespace;
    options.state_table = iceberg::TableIdentifier{ns, table.table};
    options.changelog_table = iceberg::TableIdentifier{ns, table.table + config.changelog_suffix};
    options.audit = args.audit ? verify::AuditRequest::kRun : verify::AuditRequest::kSkip;
    options.wait = std::chrono::seconds(args.wait_seconds);
    options.max_examples = args.examples;
    const verify::ReconcileReport report = verify::reconcile(options, *catalog);
    verdict = verify::combine(verdict, report.verdict());
    if (args.json) {
      reports.push_back(report.to_json());
    } else {
      std::cout << report.to_text();
    }
  }
  if (args.json)
    std::cout << nlohmann::json{{"verdict", verify::to_string(verdict)}, {"tables", reports}}.dump(2) << "\n";
  switch (verdict) {
    case verify::Verdict::kEqual:
      return 0;
    case verify::Verdict::kDifferent:
      return kExitDifferent;
    case verify::Verdict::kIncomplete:
      return kExitIncomplete;
  }
  BINBERG_UNREACHABLE("verdict {}", static_cast<int>(verdict));
}

}  // namespace

Command add_reconcile_command(CLI::App& app) {
  auto* command = app.add_subcommand("reconcile", "Prove Iceberg tables equal their source tables");
  auto args = std::make_shared<ReconcileArgs>();
  command->add_option("-c,--config", args->config, "configuration file (the one replicate uses)")->required();
  command->add_option("-t,--table", args->tables, "database.table to compare (default: every captured table)");
  command->add_flag("--json", args->json, "print a JSON report");
  command->add_flag("!--no-audit", args->audit,
                    "skip the changelog event-id audit, and accept a verdict without it (exit 0, not 4)");
  command->add_option("--wait", args->wait_seconds, "seconds to wait for the tables to reach the source")
      ->capture_default_str();
  command->add_option("--examples", args->examples, "differences to show per table")->capture_default_str();
  return Command{command, [args] { return run_reconcile(*args); }};
}

}  // namespace binberg::cli
