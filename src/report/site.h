#pragma once

// binberg report: the evidence site, a static folder rendered from the run records alone
// (docs/drills.md, "The evidence site"). No script, nothing loaded from outside the folder; every
// string from a record escaped.

#include <cstddef>
#include <filesystem>
#include <optional>

namespace binberg::report {

struct SiteOptions {
  std::filesystem::path runs_dir;  // as `binberg drill run --runs-dir` wrote it
  std::filesystem::path out_dir;   // the site's folder: created, or replaced when it holds an earlier report
  // docs/ of the source tree: drills.md and runbook.md are rendered into the site when found, so run
  // pages link their sections; without them a section is named, not linked.
  std::optional<std::filesystem::path> docs_dir;
};

struct SiteSummary {
  std::filesystem::path index;  // absolute
  std::size_t runs = 0, records = 0, files = 0;
};

// Loads and checks every record (evidence::load_runs: schema and manifest SHA-256), renders every
// page in memory, then writes the site into a temporary folder beside OUT and renames it into place.
// Throws Error naming the file when a record is refused; nothing is written then.
SiteSummary build_site(const SiteOptions& options);

}  // namespace binberg::report
