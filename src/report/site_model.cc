#include "report/site_model.h"

#include "core/assert.h"
#include "report/html.h"

namespace binberg::report {

std::string RecordEntry::page_href() const { return "runs/" + url_segment(run) + "/" + url_segment(drill) + ".html"; }
std::string RecordEntry::json_href() const { return "runs/" + url_segment(run) + "/" + url_segment(drill) + ".json"; }
std::filesystem::path RecordEntry::page_file() const { return std::filesystem::path("runs") / run / (drill + ".html"); }
std::filesystem::path RecordEntry::json_file() const { return std::filesystem::path("runs") / run / (drill + ".json"); }

std::string RecordEntry::text(const char* key) const {
  const auto found = record->find(key);
  return found != record->end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::optional<double> RecordEntry::recovery_seconds() const {
  const auto found = record->find("recovery_seconds");
  if (found == record->end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

std::vector<const RecordEntry*> SiteModel::latest() const {
  std::vector<const RecordEntry*> latest;
  for (const auto& [drill, entries] : by_drill) {
    BINBERG_ASSERT(!entries.empty(), "drill {} listed without a record", drill);
    latest.push_back(&entries.back());
  }
  return latest;
}

std::optional<std::string> SiteModel::docs_href(const std::string& docs_field) const {
  std::string file = docs_field, anchor;
  if (const auto hash = file.find('#'); hash != std::string::npos) {
    anchor = file.substr(hash);
    file.resize(hash);
  }
  if (file.starts_with("docs/")) file.erase(0, 5);
  for (const SiteDoc& doc : docs) {
    if (doc.source_name == file) return doc.page + anchor;
  }
  return std::nullopt;
}

SiteModel make_site_model(std::vector<evidence::StoredRun> runs, std::vector<SiteDoc> docs) {
  SiteModel model;
  model.runs = std::move(runs);
  model.docs = std::move(docs);
  for (const evidence::StoredRun& run : model.runs) {
    for (const evidence::StoredRecord& stored : run.records) {
      RecordEntry entry{run.run_id, stored.record.at("drill").get<std::string>(), stored.sha256, &stored.record};
      model.by_drill[entry.drill].push_back(std::move(entry));
      ++model.record_count;
    }
  }
  return model;
}

}  // namespace binberg::report
