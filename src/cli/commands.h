#pragma once

// Each subcommand registers its options on the CLI11 app and returns the action to run.

#include <functional>
#include <memory>
#include <string>

#include "metrics/exporter.h"

namespace CLI {
class App;
}

namespace binberg::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// For the long-running commands (replicate, source, sink): the Prometheus endpoint on ADDRESS
// (none when empty; its URL is logged), and SIGTERM/SIGINT as a graceful stop request.
std::unique_ptr<metrics::Exporter> export_metrics(metrics::Registry& registry, const std::string& address);
std::function<bool()> stop_on_signals();

Command add_services_command(CLI::App& app);
Command add_smoke_command(CLI::App& app);
Command add_replicate_command(CLI::App& app);
Command add_source_command(CLI::App& app);
Command add_sink_command(CLI::App& app);
Command add_dlq_command(CLI::App& app);
Command add_reconcile_command(CLI::App& app);
Command add_gen_command(CLI::App& app);
Command add_table_command(CLI::App& app);
Command add_drill_command(CLI::App& app);
Command add_report_command(CLI::App& app);

}  // namespace binberg::cli
