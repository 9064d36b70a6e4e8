#pragma once

// Each subcommand registers its options on the CLI11 app and returns the action to run.

#include <functional>

namespace CLI {
class App;
}

namespace binberg::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_services_command(CLI::App& app);
Command add_smoke_command(CLI::App& app);
Command add_replicate_command(CLI::App& app);
Command add_source_command(CLI::App& app);
Command add_sink_command(CLI::App& app);
Command add_reconcile_command(CLI::App& app);
Command add_gen_command(CLI::App& app);
Command add_table_command(CLI::App& app);

}  // namespace binberg::cli
