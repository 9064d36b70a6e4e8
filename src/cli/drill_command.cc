// `binberg drill list | run NAME... | run all`: the fault drills (docs/drills.md).

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "core/version.h"
#include "drill/drill.h"
#include "drill/runner.h"

namespace binberg::cli {
namespace {

struct DrillArgs {
  std::vector<std::string> names;
  bool quick = false;
  drill::DrillOptions options;
};

// This process's command line, for the records' provenance.
std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  return args;
}

int list_drills() {
  for (const drill::Drill& drill : drill::all_drills()) {
    std::cout << fmt::format("{:<20} path {:<4} {}\n", drill.name, drill.paths, drill.title);
  }
  return 0;
}

}  // namespace

Command add_drill_command(CLI::App& app) {
  auto* command = app.add_subcommand("drill", "Fault drills on real services, recorded as evidence (docs/drills.md)");
  command->require_subcommand(1);
  auto args = std::make_shared<DrillArgs>();
  args->options.runs_dir = std::filesystem::path(kSourceDir) / "runs";
  args->options.services_dir = std::filesystem::path(kSourceDir) / ".drill-services";
  auto* list = command->add_subcommand("list", "The drills, with what each does");
  auto* run = command->add_subcommand("run", "Run drills (names, or all) and write their run records");
  run->add_option("drills", args->names, "drill names, or all")->required();
  run->add_flag("--quick", args->quick, "small sizes (~5,000 events): CI");
  run->add_option("--events", args->options.events,
                  "row events of each drill's workload (default: 100,000; quick 5,000)");
  run->add_option("--seed", args->options.seed, "workload seed")->capture_default_str();
  run->add_option("--runs-dir", args->options.runs_dir, "where run folders go")->capture_default_str();
  run->add_option("--services-dir", args->options.services_dir,
                  "the drill stack's folder (started there unless it runs; stopped at the end if started)")
      ->capture_default_str();
  run->add_option("--port-offset", args->options.port_offset, "the drill stack's ports: the defaults plus this")
      ->capture_default_str();
  return Command{command, [args, list] {
                   if (list->parsed()) return list_drills();
                   args->options.size = args->quick ? drill::DrillSize::kQuick : drill::DrillSize::kFull;
                   args->options.binberg = std::filesystem::canonical("/proc/self/exe");
                   args->options.runs_dir = std::filesystem::absolute(args->options.runs_dir);
                   args->options.services_dir = std::filesystem::absolute(args->options.services_dir);
                   return drill::run_drills(args->options, args->names, command_line());
                 }};
}

}  // namespace binberg::cli
