// `binberg report [--runs-dir D] --out DIR`: the evidence site from the drills' run records.

#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "core/version.h"
#include "report/site.h"

namespace binberg::cli {

Command add_report_command(CLI::App& app) {
  auto* command = app.add_subcommand("report", "Render the evidence site (static HTML) from the drills' run records");
  auto options = std::make_shared<report::SiteOptions>();
  // The drill command's default: both read and write the same runs folder unless told otherwise.
  options->runs_dir = std::filesystem::path(kSourceDir) / "runs";
  auto docs_dir = std::make_shared<std::string>((std::filesystem::path(kSourceDir) / "docs").string());
  command->add_option("--runs-dir", options->runs_dir, "the runs folder `binberg drill run` wrote")
      ->capture_default_str();
  command->add_option("--out", options->out_dir, "the site's folder (replaced if it holds an earlier report)")
      ->required();
  command
      ->add_option("--docs-dir", *docs_dir,
                   "docs/ with drills.md and runbook.md, rendered into the site when found (empty: none)")
      ->capture_default_str();
  return Command{command, [options, docs_dir] {
                   if (!docs_dir->empty() && std::filesystem::is_directory(*docs_dir)) options->docs_dir = *docs_dir;
                   const report::SiteSummary site = report::build_site(*options);
                   std::cout << site.index.string() << std::endl;
                   return 0;
                 }};
}

}  // namespace binberg::cli
