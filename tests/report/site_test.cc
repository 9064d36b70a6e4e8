#include "report/site.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include "core/canonical.h"
#include "core/error.h"
#include "evidence/run_store.h"
#include "support/temp_dir.h"

namespace binberg::report {
namespace {

namespace fs = std::filesystem;
using evidence::Check;
using evidence::Comparison;
using evidence::Phase;
using evidence::RunRecord;
using nlohmann::json;

constexpr std::int64_t kStart = 1'700'000'000'000;

RunRecord make_record(const std::string& run_id, const std::string& drill, double recovery) {
  RunRecord record;
  record.run_id = run_id;
  record.drill = drill;
  record.title = "the " + drill + " drill";
  record.docs = "docs/drills.md#" + drill;
  record.started_at_ms = kStart;
  record.finished_at_ms = kStart + 12'500;
  record.seed = 7;
  record.events = 5000;
  record.quick = true;
  record.paths = {"A", "B"};
  record.recovery_seconds = recovery;
  record.config = {{"workload_events", 5000}};
  record.provenance = {{"binberg", {{"version", "0.1.0"}, {"git_sha", "abc"}}},
                       {"services", {{"mariadb", "10.11.19-MariaDB"}}},
                       {"libraries", json::object()},
                       {"host", {{"cpus", 2}, {"memory_bytes", 1024}, {"os", "Debian 12"}, {"kernel", "6.1"}}},
                       {"command_line", {"binberg", "drill", "run"}}};
  record.timeline = {{Phase::kStart, kStart, "harness", ""},
                     {Phase::kInject, kStart + 1'000, "SIGKILL of replicate (pid 42)", ""},
                     {Phase::kDetect, kStart + 1'010, "waitpid: signal 9", ""},
                     {Phase::kRecover, kStart + 2'250, "snapshot 123 covers binlog.000001:400", ""},
                     {Phase::kVerify, kStart + 9'000, "binberg reconcile exit status 0", "path A: equal"}};
  record.checks = {Check::compare("reconcile_path_a", "equal", Comparison::kEqual, "equal", "2 tables"),
                   Check::compare("max_recovery_seconds", recovery, Comparison::kAtMost, 30)};
  record.reconcile =
      json::array({{{"path", "A"},
                    {"table", "binberg.drill_accounts"},
                    {"verdict", "equal"},
                    {"source", {{"rows", 100}, {"digest", std::string(64, 'a')}, {"position", "b:4"}}},
                    {"iceberg", {{"rows", 100}, {"digest", std::string(64, 'a')}, {"duplicate_keys", 0}}},
                    {"diff", {{"missing", 0}, {"extra", 0}, {"different", 0}}}}});
  record.parity = json::array({{{"table", "binberg.drill_accounts"},
                                {"source_digest", std::string(64, 'a')},
                                {"a_digest", std::string(64, 'a')},
                                {"b_digest", std::string(64, 'a')},
                                {"equal", true}}});
  record.samples["recovery_seconds"] = evidence::Series{"s", "per fault", {{kStart + 1'000, recovery}}};
  record.samples["commit_duration_seconds"] =
      evidence::Series{"s", "", {{kStart + 1'000, 0.004}, {kStart + 2'000, 0.2}, {kStart + 3'000, 1.5}}};
  return record;
}

// Writes one sealed run of DRILLS; returns its folder.
fs::path write_run(const fs::path& runs, const std::vector<std::string>& drills, double recovery = 1.25) {
  evidence::RunStore store = evidence::RunStore::create(runs);
  for (const std::string& drill : drills) store.write(make_record(store.run_id(), drill, recovery));
  store.seal();
  return store.run_dir();
}

SiteOptions options_for(const binberg::testing::TempDir& dir) {
  return SiteOptions{dir.path() / "runs", dir.path() / "site", fs::path(BINBERG_SOURCE_DIR) / "docs"};
}

std::vector<fs::path> site_files(const fs::path& site, const std::string& extension) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(site)) {
    if (entry.is_regular_file() && entry.path().extension() == extension) files.push_back(entry.path());
  }
  return files;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string percent_decoded(const std::string& text) {
  std::string decoded;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      decoded += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

std::string html_unescaped(std::string text) {
  for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
           {"&quot;", "\""}, {"&#39;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + c.size())) {
      text.replace(at, entity.size(), c);
    }
  }
  return text;
}

// Checks refusals leave no trace: neither the site nor a staging folder beside it.
void expect_nothing_written(const binberg::testing::TempDir& dir) {
  EXPECT_FALSE(fs::exists(dir.path() / "site"));
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "runs") << "left behind: " << entry.path();
  }
}

TEST(ReportSiteTest, ARecordChangedAfterSealingIsRefusedNamingItAndNothingIsWritten) {
  binberg::testing::TempDir dir;
  const fs::path run = write_run(dir.path() / "runs", {"replicate-kill", "sink-kill"});
  std::string text = read_file((run / "sink-kill.json").string());
  text.replace(text.find("\"events\": 5000"), 14, "\"events\": 5001");
  std::ofstream(run / "sink-kill.json", std::ios::trunc) << text;
  try {
    build_site(options_for(dir));
    FAIL() << "a tampered record was rendered";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((run / "sink-kill.json").string()), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("SHA-256"), std::string::npos) << error.what();
  }
  expect_nothing_written(dir);
}

TEST(ReportSiteTest, ARecordTheSchemaRefusesIsRefusedNamingItAndNothingIsWritten) {
  binberg::testing::TempDir dir;
  write_run(dir.path() / "runs", {"replicate-kill"});
  const fs::path run = dir.path() / "runs" / "20991231T000000Z-0123abcd";
  fs::create_directories(run);
  json record = make_record("20991231T000000Z-0123abcd", "sink-kill", 1).to_json();
  record["checks"][0]["verdict"] = "probably";
  const std::string bytes = record.dump(1);
  std::ofstream(run / "sink-kill.json") << bytes;
  std::ofstream(run / "manifest.json") << json{
      {"schema", "binberg.drill-manifest/1"},
      {"run_id", "20991231T000000Z-0123abcd"},
      {"records",
       {{{"file", "sink-kill.json"},
         {"sha256", sha256_hex(bytes)}}}}}.dump();
  try {
    build_site(options_for(dir));
    FAIL() << "a record the schema refuses was rendered";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((run / "sink-kill.json").string() + ": not a valid run record"),
              std::string::npos)
        << error.what();
  }
  expect_nothing_written(dir);
}

TEST(ReportSiteTest, HostileStringsFromARecordRenderInert) {
  binberg::testing::TempDir dir;
  evidence::RunStore store = evidence::RunStore::create(dir.path() / "runs");
  RunRecord record = make_record(store.run_id(), "replicate-kill", 2);
  const std::string script = "<script>alert(1)</script>", attribute = "\"onmouseover=alert(1) x=\"";
  record.title = script + attribute;
  record.checks[0].detail = script + attribute;
  record.reconcile[0]["table"] = script + attribute;
  record.reconcile[0]["source"]["digest"] = script;
  record.parity[0]["table"] = attribute + script;
  record.timeline[1].signal = script;
  record.samples[script + attribute] = evidence::Series{attribute, script, {{kStart, 1}}};
  record.config = {{script, attribute}};
  record.error = script;
  store.write(record);
  store.seal();
  // A run folder's name is not checked by the schema: it is data too.
  const fs::path hostile_run = dir.path() / "runs" / (store.run_id() + "\"><script>alert(2)");
  fs::rename(store.run_dir(), hostile_run);

  build_site(options_for(dir));
  std::size_t pages = 0;
  for (const fs::path& file : site_files(dir.path() / "site", ".html")) {
    const std::string html = lowercase(read_file(file.string()));
    EXPECT_EQ(html.find("<script"), std::string::npos) << file;
    EXPECT_EQ(html.find("\"onmouseover"), std::string::npos) << file;
    EXPECT_EQ(html.find("javascript:"), std::string::npos) << file;
    pages += html.find("&lt;script&gt;alert(1)") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(pages, 2u) << "the index and the run page show the hostile strings, escaped";
  EXPECT_TRUE(fs::exists(dir.path() / "site" / "runs" / hostile_run.filename() / "replicate-kill.html"));
}

// Every href and src of every page is relative and names a file of the site; a fragment names an
// id of its page.
void expect_every_link_resolves(const fs::path& site) {
  const std::regex reference("(?:href|src)=\"([^\"]*)\"");
  std::size_t links = 0;
  for (const fs::path& file : site_files(site, ".html")) {
    const std::string html = read_file(file.string());
    for (auto it = std::sregex_iterator(html.begin(), html.end(), reference); it != std::sregex_iterator(); ++it) {
      const std::string target = html_unescaped((*it)[1]);
      ASSERT_FALSE(target.empty()) << file;
      EXPECT_EQ(target.find("//"), std::string::npos) << "leaves the folder: " << target << " in " << file;
      const std::size_t hash = target.find('#');
      const fs::path path = (file.parent_path() / percent_decoded(target.substr(0, hash))).lexically_normal();
      EXPECT_TRUE(path.string().starts_with(site.string())) << target << " in " << file;
      ASSERT_TRUE(fs::is_regular_file(path)) << target << " in " << file << " resolves to nothing";
      if (hash != std::string::npos) {
        EXPECT_NE(read_file(path.string()).find("id=\"" + target.substr(hash + 1) + "\""), std::string::npos)
            << target << " in " << file;
      }
      ++links;
    }
  }
  EXPECT_GT(links, 10u);
}

TEST(ReportSiteTest, TheIndexListsEveryDrillOfTheLatestRunAndEveryLinkResolves) {
  binberg::testing::TempDir dir;
  // Runs are ordered by their folders' names (UTC time first); two made within one second would
  // be ordered by their random suffix, so the earlier one is named older.
  const fs::path earlier = write_run(dir.path() / "runs", {"replicate-kill", "commit-crash"}, 3.5);
  fs::rename(earlier, dir.path() / "runs" / "20000101T000000Z-00000000");
  const fs::path latest = write_run(dir.path() / "runs", {"replicate-kill", "commit-crash", "sink-kill"}, 1.25);
  const SiteSummary summary = build_site(options_for(dir));
  EXPECT_EQ(summary.index, dir.path() / "site" / "index.html");
  EXPECT_EQ(summary.runs, 2u);
  EXPECT_EQ(summary.records, 5u);

  const std::string index = read_file(summary.index.string());
  for (const std::string drill : {"replicate-kill", "commit-crash", "sink-kill"}) {
    const std::string href = "runs/" + latest.filename().string() + "/" + drill + ".html";
    EXPECT_NE(index.find("href=\"" + href + "\""), std::string::npos) << drill << " not linked to its latest run";
  }
  EXPECT_NE(index.find("2 runs: 2 pass"), std::string::npos) << "the trend counts earlier runs";
  EXPECT_NE(index.find("data-points=\"3\""), std::string::npos) << "the recovery chart has a bar per drill";
  EXPECT_NE(index.find("<td><code>max_recovery_seconds</code></td><td>1.25</td><td>&lt;= 30</td>"), std::string::npos)
      << "the verification table shows value and threshold";
  EXPECT_EQ(lowercase(index).find("<script"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir.path() / "site" / "style.css"));
  expect_every_link_resolves(dir.path() / "site");
}

TEST(ReportSiteTest, ARunPageHasTheTimelineChecksDigestsChartsAndTheSealedRecord) {
  binberg::testing::TempDir dir;
  const fs::path run = write_run(dir.path() / "runs", {"broker-restart"});
  build_site(options_for(dir));
  const fs::path page_dir = dir.path() / "site" / "runs" / run.filename();
  const std::string html = read_file((page_dir / "broker-restart.html").string());
  for (const char* expected : {"+1.000 s", "+1.010 s", "+2.250 s", "SIGKILL of replicate (pid 42)",
                               "<code>reconcile_path_a</code>", "(log scale)", "href=\"broker-restart.json\"",
                               "href=\"../../drills.html#broker-restart\"", "10.11.19-MariaDB"}) {
    EXPECT_NE(html.find(expected), std::string::npos) << expected;
  }
  EXPECT_EQ(std::count(html.begin(), html.end(), '\n') > 0, true);
  const std::regex chart("<svg class=\"chart\" data-points=\"([0-9]+)\"");
  std::vector<std::string> points;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), chart); it != std::sregex_iterator(); ++it) {
    points.push_back((*it)[1]);
  }
  EXPECT_EQ(points, (std::vector<std::string>{"3", "1"})) << "one chart per series, a point per sample";
  const std::string copied = read_file((page_dir / "broker-restart.json").string());
  EXPECT_EQ(copied, read_file((run / "broker-restart.json").string())) << "the record is copied byte for byte";
  EXPECT_NE(html.find(sha256_hex(copied)), std::string::npos) << "with its SHA-256 beside the link";
  EXPECT_EQ(read_file((page_dir / "manifest.json").string()), read_file((run / "manifest.json").string()));
}

TEST(ReportSiteTest, AnEarlierReportIsReplacedButAnotherFolderIsNot) {
  binberg::testing::TempDir dir;
  write_run(dir.path() / "runs", {"replicate-kill"});
  build_site(options_for(dir));
  write_run(dir.path() / "runs", {"sink-kill"});
  build_site(options_for(dir));
  EXPECT_NE(read_file((dir.path() / "site" / "index.html").string()).find("sink-kill"), std::string::npos);

  fs::create_directories(dir.path() / "elsewhere");
  std::ofstream(dir.path() / "elsewhere" / "notes.txt") << "mine";
  SiteOptions options = options_for(dir);
  options.out_dir = dir.path() / "elsewhere";
  EXPECT_THROW(build_site(options), Error);
  EXPECT_TRUE(fs::exists(dir.path() / "elsewhere" / "notes.txt"));
  EXPECT_FALSE(fs::exists(dir.path() / "elsewhere" / "index.html"));
}

TEST(ReportSiteTest, NoRunsYetRendersAnIndexThatSaysSo) {
  binberg::testing::TempDir dir;
  fs::create_directories(dir.path() / "runs");
  const SiteSummary summary = build_site(options_for(dir));
  EXPECT_EQ(summary.records, 0u);
  EXPECT_NE(read_file(summary.index.string()).find("No sealed run records"), std::string::npos);
}

TEST(ReportSiteTest, AMissingRunsFolderIsRefused) {
  binberg::testing::TempDir dir;
  EXPECT_THROW(build_site(options_for(dir)), Error);
  expect_nothing_written(dir);
}

}  // namespace
}  // namespace binberg::report
