#pragma once

// What the pages are drawn from: the runs load_runs checked, regrouped per drill. Internal to the
// report room.

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evidence/run_store.h"

namespace binberg::report {

// One checked record and where it lives in the site.
struct RecordEntry {
  std::string run;  // the run folder's name
  std::string drill;
  std::string sha256;  // of the record's bytes, as its manifest says
  const nlohmann::json* record = nullptr;

  // Site-relative paths (URL-encoded), e.g. runs/20261207T010203Z-0123abcd/replicate-kill.html.
  std::string page_href() const;
  std::string json_href() const;
  // The same, as files under the site's folder.
  std::filesystem::path page_file() const;
  std::filesystem::path json_file() const;

  std::string text(const char* key) const;  // a string field, "" when absent
  std::optional<double> recovery_seconds() const;
  std::string verdict() const { return text("verdict"); }
};

// A document of docs/ rendered into the site (drills.md -> drills.html).
struct SiteDoc {
  std::string source_name;  // "drills.md"
  std::string page;         // "drills.html"
  std::string title;
};

// Move-only: the entries point into `runs`, whose records a move keeps where they are.
struct SiteModel {
  SiteModel() = default;
  SiteModel(SiteModel&&) = default;
  SiteModel& operator=(SiteModel&&) = default;
  SiteModel(const SiteModel&) = delete;
  SiteModel& operator=(const SiteModel&) = delete;

  std::vector<evidence::StoredRun> runs;                     // oldest first
  std::map<std::string, std::vector<RecordEntry>> by_drill;  // each drill's records, oldest first
  std::vector<SiteDoc> docs;
  std::size_t record_count = 0;

  // The latest record of each drill, by drill name.
  std::vector<const RecordEntry*> latest() const;
  // The site-relative href of a record's `docs` field (docs/drills.md#x -> drills.html#x), or
  // nothing when that document is not in the site.
  std::optional<std::string> docs_href(const std::string& docs_field) const;
};

// Groups RUNS (as load_runs returned them) per drill. DOCS: the documents in the site.
SiteModel make_site_model(std::vector<evidence::StoredRun> runs, std::vector<SiteDoc> docs);

// Pages, as whole HTML documents.
std::string render_index_page(const SiteModel& model);
std::string render_run_page(const SiteModel& model, const RecordEntry& entry);
// The evidence sections of a run page (run_evidence.cc).
std::string reconcile_section(const nlohmann::json& record);
std::string parity_section(const nlohmann::json& record);
std::string samples_section(const nlohmann::json& record);
// A markdown document as HTML: headings with GitHub's anchors, everything else preformatted.
std::string render_doc_page(const std::string& title, const std::string& markdown);
// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as '-'.
std::string heading_anchor(const std::string& heading);

}  // namespace binberg::report
