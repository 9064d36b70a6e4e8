#include "evidence/run_store.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "core/canonical.h"
#include "core/error.h"
#include "support/temp_dir.h"

namespace binberg::evidence {
namespace {

using nlohmann::json;

RunRecord sample_record(const std::string& run_id, const std::string& drill) {
  RunRecord record;
  record.run_id = run_id;
  record.drill = drill;
  record.title = "a sample drill";
  record.started_at_ms = 1'700'000'000'000;
  record.finished_at_ms = 1'700'000'012'500;
  record.seed = 7;
  record.events = 5000;
  record.paths = {"A", "B"};
  record.recovery_seconds = 1.25;
  record.provenance = {{"binberg", {{"version", "0.1.0"}, {"git_sha", "abc"}}},
                       {"services", {{"mariadb", "10.11.19-MariaDB"}}},
                       {"libraries", json::object()},
                       {"host", {{"cpus", 2}, {"memory_bytes", 1024}, {"os", "Debian 12"}, {"kernel", "6.1"}}},
                       {"command_line", {"binberg", "drill", "run"}}};
  record.timeline = {{Phase::kInject, 1'700'000'001'000, "SIGKILL of the broker (pid 42)", ""},
                     {Phase::kRecover, 1'700'000'002'250, "sink log line 'committed'", ""}};
  record.checks = {Check::compare("diff_rows", 0, Comparison::kEqual, 0),
                   Check::compare("recovery_seconds", 1.25, Comparison::kAtMost, 5)};
  record.samples["lag_events"] = Series{"events", "", {{1'700'000'001'000, 10}, {1'700'000'002'000, 0}}};
  return record;
}

TEST(RunRecordTest, AllChecksHoldingIsAPassAndASkippedCheckIsNot) {
  RunRecord record = sample_record("20261207T010203Z-0123abcd", "broker-restart");
  EXPECT_EQ(record.verdict(), RunVerdict::kPass);
  EXPECT_EQ(record.to_json()["verdict"], "pass");
  record.checks.push_back(Check::skipped("audit_clean", true, Comparison::kHolds, "no changelog"));
  EXPECT_EQ(record.verdict(), RunVerdict::kIncomplete);
  record.checks.push_back(Check::compare("lag_zero", 3, Comparison::kEqual, 0));
  EXPECT_EQ(record.verdict(), RunVerdict::kFail);
  record.checks.clear();
  EXPECT_EQ(record.verdict(), RunVerdict::kIncomplete) << "a drill that checked nothing proved nothing";
  record.checks.push_back(Check::compare("diff_rows", 0, Comparison::kEqual, 0));
  record.error = "the stack did not come up";
  EXPECT_EQ(record.verdict(), RunVerdict::kFail);
}

TEST(RunRecordTest, ChecksCompareNumbersByValue) {
  EXPECT_EQ(Check::compare("a", 5, Comparison::kAtMost, 5.0).verdict, CheckVerdict::kPass);
  EXPECT_EQ(Check::compare("a", 5.5, Comparison::kAtMost, 5).verdict, CheckVerdict::kFail);
  EXPECT_EQ(Check::compare("a", "x", Comparison::kEqual, "x").verdict, CheckVerdict::kPass);
  EXPECT_EQ(Check::compare("a", false, Comparison::kHolds, true).verdict, CheckVerdict::kFail);
}

TEST(RunStoreTest, RecordsAreWrittenOnceSealedAndReadBackChecked) {
  binberg::testing::TempDir dir;
  RunStore store = RunStore::create(dir.path());
  EXPECT_TRUE(std::regex_match(store.run_id(), std::regex("[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")));
  store.write(sample_record(store.run_id(), "broker-restart"));
  EXPECT_THROW(store.write(sample_record(store.run_id(), "broker-restart")), Error) << "never overwritten";
  store.write(sample_record(store.run_id(), "mis-keying"));
  EXPECT_TRUE(load_runs(dir.path()).empty()) << "an unsealed run is still being written";
  store.seal();
  const auto runs = load_runs(dir.path());
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].records.size(), 2u);
  EXPECT_EQ(runs[0].records[0].record["drill"], "broker-restart");
}

TEST(RunStoreTest, ATamperedRecordIsRefusedNamingTheFile) {
  binberg::testing::TempDir dir;
  RunStore store = RunStore::create(dir.path());
  const auto path = store.write(sample_record(store.run_id(), "broker-restart"));
  store.seal();
  std::string text = read_file(path.string());
  text.replace(text.find("\"diff_rows\""), 11, "\"diff_rowz\"");
  std::ofstream(path, std::ios::trunc) << text;
  try {
    load_runs(dir.path());
    FAIL() << "a tampered record was read";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("SHA-256"), std::string::npos) << error.what();
  }
}

TEST(RunStoreTest, ARecordTheSchemaRefusesIsRefusedNamingTheFileAndTheProblem) {
  binberg::testing::TempDir dir;
  const auto run = dir.path() / "20261207T010203Z-0123abcd";
  std::filesystem::create_directories(run);
  json record = sample_record("20261207T010203Z-0123abcd", "broker-restart").to_json();
  record["checks"][0]["verdict"] = "probably";
  const std::string text = record.dump(1);
  std::ofstream(run / "broker-restart.json") << text;
  std::ofstream(run / "manifest.json") << json{
      {"schema", "binberg.drill-manifest/1"},
      {"run_id", "20261207T010203Z-0123abcd"},
      {"records",
       {{{"file", "broker-restart.json"},
         {"sha256", sha256_hex(text)}}}}}.dump();
  try {
    load_runs(dir.path());
    FAIL() << "a record the schema refuses was read";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("broker-restart.json: not a valid run record"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("/checks/0/verdict"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace binberg::evidence
