#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "lab/service_stack.h"

namespace binberg::cli {

Command add_services_command(CLI::App& app) {
  auto request = std::make_shared<lab::ServicesRequest>();
  CLI::App* command = app.add_subcommand(
      "services", "Start, stop or inspect the local MariaDB, Kafka, Apicurio Registry and PostgreSQL stack");
  command->add_option("action", request->action, "up, down or status")
      ->required()
      ->check(CLI::IsMember({"up", "down", "status"}));
  command->add_option("--dir", request->dir, "services dir (default $BINBERG_SERVICES_DIR or <source>/.services)");
  command->add_option("--port-offset", request->port_offset, "added to every default port, to run stacks side by side")
      ->capture_default_str();
  command->add_option("--only", request->only, "comma-separated subset of mariadb,postgres,kafka,registry");
  return {command, [request]() -> int { lab::exec_services_script(*request); }};
}

}  // namespace binberg::cli
