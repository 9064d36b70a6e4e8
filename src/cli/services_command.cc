#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/version.h"

namespace binberg::cli {
namespace {

struct ServicesArgs {
  std::string action;
  std::string dir;
  unsigned port_offset = 0;
  std::string only;
};

// The service stack lives in scripts/services, shared with CI and the tests' ctest fixture.
int run_services_script(const ServicesArgs& args) {
  const char* home = std::getenv("BINBERG_HOME");
  const std::string script = std::string(home != nullptr ? home : kSourceDir) + "/scripts/services";
  if (::access(script.c_str(), R_OK) != 0) {
    fail("services: {} not found; set BINBERG_HOME to the binberg source tree", script);
  }
  std::vector<std::string> argv = {"bash", script, args.action};
  if (!args.dir.empty()) argv.insert(argv.end(), {"--dir", args.dir});
  argv.insert(argv.end(), {"--port-offset", std::to_string(args.port_offset)});
  if (!args.only.empty()) argv.insert(argv.end(), {"--only", args.only});
  std::vector<char*> raw;
  for (auto& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  ::execvp("bash", raw.data());
  fail("services: cannot run bash {}", script);
}

}  // namespace

Command add_services_command(CLI::App& app) {
  auto args = std::make_shared<ServicesArgs>();
  CLI::App* command = app.add_subcommand(
      "services", "Start, stop or inspect the local MariaDB, Kafka, Apicurio Registry and PostgreSQL stack");
  command->add_option("action", args->action, "up, down or status")
      ->required()
      ->check(CLI::IsMember({"up", "down", "status"}));
  command->add_option("--dir", args->dir, "services dir (default $BINBERG_SERVICES_DIR or <source>/.services)");
  command->add_option("--port-offset", args->port_offset, "added to every default port, to run stacks side by side")
      ->capture_default_str();
  command->add_option("--only", args->only, "comma-separated subset of mariadb,postgres,kafka,registry");
  return {command, [args] { return run_services_script(*args); }};
}

}  // namespace binberg::cli
