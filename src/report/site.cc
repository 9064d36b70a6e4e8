#include "report/site.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <map>
#include <random>

#include "core/canonical.h"
#include "core/error.h"
#include "evidence/run_record.h"
#include "evidence/run_store.h"
#include "report/html.h"
#include "report/site_model.h"

namespace binberg::report {
namespace {

namespace fs = std::filesystem;

// Marks a folder as a report's, so a later report may replace it and nothing else is replaced.
constexpr const char* kMarker = ".binberg-report";

using SiteFiles = std::map<fs::path, std::string>;  // site-relative path -> bytes

// The record's bytes as they are now, which must still be the bytes its manifest sealed: the site
// copies them for readers to hash themselves.
std::string sealed_bytes(const evidence::StoredRecord& stored) {
  std::string bytes = read_file(stored.file.string());
  if (sha256_hex(bytes) != stored.sha256) {
    fail("{}: changed while the report was rendered (SHA-256 no longer {})", stored.file.string(), stored.sha256);
  }
  return bytes;
}

std::vector<SiteDoc> read_docs(const std::optional<fs::path>& docs_dir, SiteFiles& files) {
  std::vector<SiteDoc> docs;
  if (!docs_dir) return docs;
  const std::pair<const char*, const char*> known[] = {{"drills.md", "Fault drills"},
                                                       {"runbook.md", "Incident runbook"}};
  for (const auto& [name, title] : known) {
    if (!fs::is_regular_file(*docs_dir / name)) continue;
    SiteDoc doc{name, fs::path(name).replace_extension(".html").string(), title};
    files[doc.page] = render_doc_page(doc.title, read_file((*docs_dir / name).string()));
    docs.push_back(std::move(doc));
  }
  return docs;
}

// Every file of the site, rendered in memory: nothing touches the disk before all of it worked.
SiteFiles render_site(const SiteModel& model, SiteFiles files) {
  files["style.css"] = std::string(stylesheet());
  files["run-record.schema.json"] = evidence::run_record_schema_text();
  files[kMarker] = "written by binberg report; a later report may replace this folder\n";
  for (const evidence::StoredRun& run : model.runs) {
    files[fs::path("runs") / run.run_id / "manifest.json"] = read_file((run.dir / "manifest.json").string());
    for (const evidence::StoredRecord& stored : run.records) {
      files[fs::path("runs") / run.run_id / (stored.record.at("drill").get<std::string>() + ".json")] =
          sealed_bytes(stored);
    }
  }
  for (const auto& [drill, entries] : model.by_drill) {
    for (const RecordEntry& entry : entries) {
      files[entry.page_file()] = render_run_page(model, entry);
      spdlog::info("report: {}", entry.page_file().string());
    }
  }
  files["index.html"] = render_index_page(model);
  spdlog::info("report: index.html");
  return files;
}

std::string random_suffix() {
  std::random_device random;
  return fmt::format("{:08x}", random());
}

void write_files(const fs::path& dir, const SiteFiles& files) {
  for (const auto& [relative, bytes] : files) {
    const fs::path path = dir / relative;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
    out.close();
    if (!out) fail("cannot write {}", path.string());
  }
}

// Puts the folder STAGED where OUT is: OUT must be missing, empty, or an earlier report.
void move_into_place(const fs::path& staged, const fs::path& out) {
  if (!fs::exists(out)) {
    fs::rename(staged, out);
    return;
  }
  if (!fs::is_directory(out) || (!fs::is_empty(out) && !fs::exists(out / kMarker))) {
    fail("{}: exists and is not an earlier binberg report; refusing to replace it", out.string());
  }
  const fs::path old = out.parent_path() / ("." + out.filename().string() + ".old-" + random_suffix());
  fs::rename(out, old);
  fs::rename(staged, out);
  fs::remove_all(old);
}

void write_site(const fs::path& out, const SiteFiles& files) {
  fs::create_directories(out.parent_path());
  const fs::path staged = out.parent_path() / ("." + out.filename().string() + ".tmp-" + random_suffix());
  try {
    write_files(staged, files);
    move_into_place(staged, out);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staged, ignored);
    throw;
  }
}

}  // namespace

SiteSummary build_site(const SiteOptions& options) {
  fs::path out = fs::absolute(options.out_dir).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();  // "site/" names the folder "site"
  if (out == out.root_path()) fail("{}: not a folder the report can be written to", out.string());
  std::vector<evidence::StoredRun> runs = evidence::load_runs(options.runs_dir);
  SiteFiles files;
  std::vector<SiteDoc> docs = read_docs(options.docs_dir, files);
  const SiteModel model = make_site_model(std::move(runs), std::move(docs));
  spdlog::info("report: {} runs, {} records from {}", model.runs.size(), model.record_count, options.runs_dir.string());
  files = render_site(model, std::move(files));
  write_site(out, files);
  return SiteSummary{out / "index.html", model.runs.size(), model.record_count, files.size()};
}

}  // namespace binberg::report
