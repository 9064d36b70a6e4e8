// The verdict of a reconcile report: a failed check makes it DIFFERENT, a check that did not run
// (or ran in part) INCOMPLETE unless the user asked for it to be skipped, and the text and JSON
// say which check was skipped and why.

#include "verify/reconcile.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace binberg::verify {
namespace {

ReconcileReport equal_report() {
  ReconcileReport report;
  report.source_table = report.iceberg_table = "db.t";
  report.source_rows = report.table_rows = 3;
  report.source_digest = report.table_digest = "abc";
  report.audit = EventAudit{5, 5, 0, 0, 0, {}};
  return report;
}

TEST(ReconcileReportTest, EveryCheckRunAndPassedIsEqual) {
  const ReconcileReport report = equal_report();
  EXPECT_EQ(report.verdict(), Verdict::kEqual);
  EXPECT_EQ(report.to_json()["verdict"], "equal");
  EXPECT_EQ(report.to_json()["skipped"], nlohmann::json::array());
  EXPECT_NE(report.to_text().find("db.t vs db.t: EQUAL"), std::string::npos) << report.to_text();
}

TEST(ReconcileReportTest, AnyFailedCheckIsDifferent) {
  for (const auto& damage : std::vector<std::function<void(ReconcileReport&)>>{
           [](ReconcileReport& r) { r.table_rows = 2; }, [](ReconcileReport& r) { r.duplicate_keys = 1; },
           [](ReconcileReport& r) { r.missing = 1; }, [](ReconcileReport& r) { r.extra = 1; },
           [](ReconcileReport& r) { r.different = 1; }, [](ReconcileReport& r) { r.table_digest = "abd"; },
           [](ReconcileReport& r) { r.audit->missing = 1; }, [](ReconcileReport& r) { r.audit->duplicates = 1; },
           [](ReconcileReport& r) { r.audit->unknown = 1; }}) {
    ReconcileReport report = equal_report();
    damage(report);
    EXPECT_EQ(report.verdict(), Verdict::kDifferent) << report.to_text();
    report.skipped.push_back(SkippedCheck{"audit", "some reason", false});
    EXPECT_EQ(report.verdict(), Verdict::kDifferent) << "a failure outweighs a skipped check";
  }
}

TEST(ReconcileReportTest, ASkippedCheckIsIncompleteNotAPass) {
  ReconcileReport report = equal_report();
  report.audit.reset();
  report.skipped.push_back(SkippedCheck{"audit", "its initial-copy rows come from two copies", false});
  EXPECT_EQ(report.verdict(), Verdict::kIncomplete);
  const nlohmann::json json = report.to_json();
  EXPECT_EQ(json["verdict"], "incomplete");
  EXPECT_EQ(json["audit"]["verdict"], "skipped");
  ASSERT_EQ(json["skipped"].size(), 1u);
  EXPECT_EQ(json["skipped"][0]["check"], "audit");
  EXPECT_EQ(json["skipped"][0]["reason"], "its initial-copy rows come from two copies");
  EXPECT_FALSE(json["skipped"][0]["accepted"].get<bool>());
  const std::string text = report.to_text();
  EXPECT_NE(text.find("db.t vs db.t: INCOMPLETE"), std::string::npos) << text;
  EXPECT_NE(text.find("  skipped  audit: its initial-copy rows come from two copies; not a pass"), std::string::npos)
      << text;
}

TEST(ReconcileReportTest, ACheckRunInPartIsIncompleteAndShowsWhatItChecked) {
  ReconcileReport report = equal_report();
  report.skipped.push_back(SkippedCheck{"audit", "events before binlog.000001:4 were not checked", false});
  EXPECT_EQ(report.verdict(), Verdict::kIncomplete);
  EXPECT_EQ(report.to_json()["audit"]["verdict"], "clean");
  EXPECT_NE(report.to_text().find("  audit    5 source events"), std::string::npos) << report.to_text();
}

TEST(ReconcileReportTest, ACheckSkippedAtTheUsersRequestIsAcceptedAndStillShown) {
  ReconcileReport report = equal_report();
  report.audit.reset();
  report.skipped.push_back(SkippedCheck{"audit", "not requested (--no-audit)", true});
  EXPECT_EQ(report.verdict(), Verdict::kEqual);
  EXPECT_TRUE(report.to_json()["skipped"][0]["accepted"].get<bool>());
  EXPECT_NE(report.to_text().find("  skipped  audit: not requested (--no-audit)\n"), std::string::npos)
      << report.to_text();
}

TEST(ReconcileReportTest, VerdictsOfSeveralTablesCombineToTheWorst) {
  EXPECT_EQ(combine(Verdict::kEqual, Verdict::kEqual), Verdict::kEqual);
  EXPECT_EQ(combine(Verdict::kEqual, Verdict::kIncomplete), Verdict::kIncomplete);
  EXPECT_EQ(combine(Verdict::kIncomplete, Verdict::kDifferent), Verdict::kDifferent);
  EXPECT_EQ(combine(Verdict::kDifferent, Verdict::kEqual), Verdict::kDifferent);
}

}  // namespace
}  // namespace binberg::verify
