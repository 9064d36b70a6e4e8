#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"binberg: exactly-once CDC from MySQL/MariaDB into Apache Iceberg"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("binberg ") + binberg::kVersion + " (" + binberg::git_sha() + ")");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();

  const std::vector<binberg::cli::Command> commands = {
      binberg::cli::add_services_command(app),  binberg::cli::add_smoke_command(app),
      binberg::cli::add_replicate_command(app), binberg::cli::add_reconcile_command(app),
      binberg::cli::add_gen_command(app),       binberg::cli::add_table_command(app),
      binberg::cli::add_source_command(app),    binberg::cli::add_sink_command(app),
      binberg::cli::add_dlq_command(app),       binberg::cli::add_drill_command(app),
      binberg::cli::add_report_command(app),
  };

  CLI11_PARSE(app, argc, argv);

  auto logger = spdlog::stderr_color_mt("binberg");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(log_level));
  try {
    binberg::failpoint::arm_from_environment();
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const binberg::ConfigError& e) {
    spdlog::error("configuration: {}", e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
