// Each check a drill computes fails on the measurement that should fail it, and is skipped (never
// passed) when there is nothing to judge.

#include "drill/checks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

namespace binberg::drill {
namespace {

using evidence::Check;
using evidence::CheckVerdict;

FaultTimes fault(std::int64_t inject_ms, std::int64_t recover_ms) {
  FaultTimes times;
  times.inject_ms = inject_ms;
  times.detect_ms = inject_ms + 1;
  times.recover_ms = recover_ms;
  times.detected = true;
  return times;
}

const evidence::Check& named(const RecoveryFindings& findings, const std::string& name) {
  for (const evidence::Check& check : findings.checks) {
    if (check.name == name) return check;
  }
  throw std::out_of_range(name);
}

TEST(DrillChecksTest, RecoveriesWithinTheThresholdPassAndTheWorstIsRecorded) {
  const RecoveryFindings findings = judge_recoveries({fault(1'000, 1'400), fault(5'000, 7'500)}, 2);
  EXPECT_EQ(named(findings, "faults_detected").verdict, CheckVerdict::kPass);
  EXPECT_EQ(named(findings, "max_recovery_seconds").verdict, CheckVerdict::kPass);
  EXPECT_DOUBLE_EQ(findings.worst_seconds.value(), 2.5);
  EXPECT_EQ(findings.series.points.size(), 2u);
}

TEST(DrillChecksTest, ASlowRecoveryFailsMaxRecoverySeconds) {
  const auto slow = static_cast<std::int64_t>(kRecoveryThresholdSeconds * 1000) + 1;
  const RecoveryFindings findings = judge_recoveries({fault(1'000, 1'400), fault(5'000, 5'000 + slow)}, 2);
  EXPECT_EQ(named(findings, "max_recovery_seconds").verdict, CheckVerdict::kFail);
}

TEST(DrillChecksTest, RecoveryCountsFromTheKilledServiceServingAgain) {
  FaultTimes broker = fault(1'000, 61'000);
  broker.service_back_ms = 60'000;  // the broker's own restart is not binberg's recovery
  EXPECT_DOUBLE_EQ(broker.recovery_seconds(), 1.0);
}

TEST(DrillChecksTest, AnUndetectedFaultFailsFaultsDetected) {
  FaultTimes unseen = fault(5'000, 5'100);
  unseen.detected = false;
  const RecoveryFindings findings = judge_recoveries({fault(1'000, 1'400), unseen}, 2);
  EXPECT_EQ(named(findings, "faults_detected").verdict, CheckVerdict::kFail);
}

TEST(DrillChecksTest, FewerFaultsThanPlannedFailFaultsDetected) {
  EXPECT_EQ(named(judge_recoveries({fault(1'000, 1'400)}, 3), "faults_detected").verdict, CheckVerdict::kFail);
}

TEST(DrillChecksTest, NoRecoveryAtAllIsSkippedNotPassed) {
  const RecoveryFindings findings = judge_recoveries({}, 2);
  EXPECT_EQ(named(findings, "faults_detected").verdict, CheckVerdict::kFail);
  EXPECT_EQ(named(findings, "max_recovery_seconds").verdict, CheckVerdict::kSkipped);
  EXPECT_FALSE(findings.worst_seconds.has_value());
}

TEST(DrillChecksTest, HistoryViolationsFailAndTooFewSnapshotsAreSkipped) {
  verify::HistoryFinding finding;
  finding.snapshots_checked = 5;
  EXPECT_EQ(history_check("ledger_sum_path_a", finding, 2, "sum").verdict, CheckVerdict::kPass);
  finding.violation_count = 1;
  finding.violations = {"db.ledger snapshot 7: sum(balance) = 90, not 100"};
  const evidence::Check broken = history_check("ledger_sum_path_a", finding, 2, "sum");
  EXPECT_EQ(broken.verdict, CheckVerdict::kFail);
  EXPECT_NE(broken.detail.find("snapshot 7"), std::string::npos) << broken.detail;
  finding = {};
  finding.snapshots_checked = 1;
  EXPECT_EQ(history_check("ledger_sum_path_a", finding, 2, "sum").verdict, CheckVerdict::kSkipped);
}

TEST(DrillChecksTest, AProcessThatDoesNotExitZeroOnSigtermFailsCleanStop) {
  EXPECT_EQ(clean_stop_check("clean_stop_path_b", {{"source", 0}, {"sink", 0}}).verdict, CheckVerdict::kPass);
  const evidence::Check killed = clean_stop_check("clean_stop_path_b", {{"source", 0}, {"sink", -SIGKILL}});
  EXPECT_EQ(killed.verdict, CheckVerdict::kFail);
  EXPECT_NE(killed.detail.find("sink exited -9"), std::string::npos) << killed.detail;
  EXPECT_EQ(clean_stop_check("clean_stop_path_b", {{"sink", 3}}).verdict, CheckVerdict::kFail);
  EXPECT_EQ(clean_stop_check("clean_stop_path_b", {}).verdict, CheckVerdict::kSkipped);
}

nlohmann::json reconciled(const std::string& path, const std::string& table, const std::string& source,
                          const std::string& iceberg) {
  return {{"path", path}, {"table", table}, {"source", {{"digest", source}}}, {"iceberg", {{"digest", iceberg}}}};
}

TEST(DrillChecksTest, ParityHoldsOnlyWhenATableHasOneDigestAcrossBothPathsAndTheSource) {
  const nlohmann::json same =
      nlohmann::json::array({reconciled("A", "db.t", "d1", "d1"), reconciled("B", "db.t", "d1", "d1")});
  const ParityFindings equal = judge_parity(same);
  EXPECT_EQ(equal.check.verdict, CheckVerdict::kPass);
  ASSERT_EQ(equal.rows.size(), 1u);
  EXPECT_TRUE(equal.rows[0].at("equal").get<bool>());

  const nlohmann::json b_differs =
      nlohmann::json::array({reconciled("A", "db.t", "d1", "d1"), reconciled("B", "db.t", "d1", "d2"),
                             reconciled("A", "db.u", "e1", "e1"), reconciled("B", "db.u", "e1", "e1")});
  const ParityFindings differs = judge_parity(b_differs);
  EXPECT_EQ(differs.check.verdict, CheckVerdict::kFail);
  EXPECT_NE(differs.check.detail.find("1 of 2 tables differ; first: db.t"), std::string::npos) << differs.check.detail;

  // Both paths agree with each other but not with the source: still a failure.
  EXPECT_EQ(
      judge_parity(nlohmann::json::array({reconciled("A", "db.t", "d0", "d1"), reconciled("B", "db.t", "d0", "d1")}))
          .check.verdict,
      CheckVerdict::kFail);
  // One path never reconciled the table.
  EXPECT_EQ(judge_parity(nlohmann::json::array({reconciled("A", "db.t", "d1", "d1")})).check.verdict,
            CheckVerdict::kFail);
  EXPECT_EQ(judge_parity(nlohmann::json::array()).check.verdict, CheckVerdict::kSkipped);
}

TEST(DrillChecksTest, DiversionHoldsOnlyWhenEveryIntruderAndNothingElseWasDiverted) {
  const DivertedRecords all{{"0", "1", "2"}, 0};
  EXPECT_EQ(diversion_check("intruders_quarantined", 3, all, "t.quarantine").verdict, CheckVerdict::kPass);
  // One intruder got through (applied, or dropped unseen).
  const Check missing = diversion_check("intruders_quarantined", 3, DivertedRecords{{"0", "2"}, 0}, "t.quarantine");
  EXPECT_EQ(missing.verdict, CheckVerdict::kFail);
  EXPECT_NE(missing.detail.find("2 of 3 intruders in t.quarantine, 1 missing"), std::string::npos) << missing.detail;
  // A record of the source itself was diverted: the gate stopped good data.
  EXPECT_EQ(diversion_check("intruders_quarantined", 3, DivertedRecords{all.intruders, 1}, "t.quarantine").verdict,
            CheckVerdict::kFail);
  EXPECT_EQ(diversion_check("intruders_dead_lettered", 0, DivertedRecords{}, "t.dlq").verdict, CheckVerdict::kSkipped);
}

// JUDGE's check of a copy of CASES that CHANGE altered: one measurement made wrong.
template <typename Case, typename Judge, typename Change>
Check judged_after(const std::vector<Case>& cases, const Judge& judge, const Change& change) {
  std::vector<Case> changed = cases;
  change(changed);
  return judge(changed);
}

// A `sink --rebuild` report with TABLES tables, each equal and holding 10 rows.
nlohmann::json rebuild_report(std::size_t tables) {
  nlohmann::json report{{"equal", true}, {"tables", nlohmann::json::array()}};
  for (std::size_t i = 0; i < tables; ++i) {
    report["tables"].push_back({{"original", fmt::format("db.t{}", i)},
                                {"equal", true},
                                {"original_rows", 10},
                                {"rebuilt_rows", 10},
                                {"original_digest", "aa"},
                                {"rebuilt_digest", "aa"}});
  }
  return report;
}

TEST(DrillChecksTest, RebuildsHoldOnlyWhenEveryRebuiltTableEqualsItsOriginal) {
  const std::vector<RebuildOutcome> good = {{"offset:0", 0, rebuild_report(2)}, {"timestamp:5", 0, rebuild_report(2)}};
  const auto judge = [](const std::vector<RebuildOutcome>& rebuilds) {
    return rebuilds_check("rebuilds_equal", rebuilds, 2);
  };
  EXPECT_EQ(judge(good).verdict, CheckVerdict::kPass);
  // A rebuilt table whose digest differs (a row lost or changed in the replay).
  const Check differing = judged_after(good, judge, [](std::vector<RebuildOutcome>& rebuilds) {
    rebuilds[1].report["tables"][1]["equal"] = false;
    rebuilds[1].report["tables"][1]["rebuilt_digest"] = "bb";
  });
  EXPECT_EQ(differing.verdict, CheckVerdict::kFail);
  EXPECT_NE(differing.detail.find("from timestamp:5: db.t1: 10 rows, sha256 aa; rebuilt 10 rows, sha256 bb"),
            std::string::npos)
      << differing.detail;
  // Equal but empty: a rebuild that copied nothing proves nothing.
  EXPECT_EQ(
      judged_after(good, judge,
                   [](std::vector<RebuildOutcome>& rebuilds) { rebuilds[0].report["tables"][0]["rebuilt_rows"] = 0; })
          .verdict,
      CheckVerdict::kFail);
  // A rebuild that failed, printed nothing, left a table out, or said its tables differ.
  EXPECT_EQ(rebuilds_check("rebuilds_equal", {{"offset:0", 1, nullptr}}, 2).verdict, CheckVerdict::kFail);
  EXPECT_EQ(rebuilds_check("rebuilds_equal", {{"offset:0", 3, rebuild_report(2)}}, 2).verdict, CheckVerdict::kFail);
  EXPECT_EQ(rebuilds_check("rebuilds_equal", {{"offset:0", 0, nullptr}}, 2).verdict, CheckVerdict::kFail);
  EXPECT_EQ(rebuilds_check("rebuilds_equal", {{"offset:0", 0, rebuild_report(1)}}, 2).verdict, CheckVerdict::kFail);
  EXPECT_EQ(rebuilds_check("rebuilds_equal", {}, 2).verdict, CheckVerdict::kSkipped);
}

TEST(DrillChecksTest, TheContractHoldsOnlyWhenTheRegistryTakesTheCompatibleAndRefusesTheRest) {
  const std::vector<ContractChange> right = {{"ADD COLUMN", true, 200}, {"direct", false, 409}, {"MODIFY", false, 409}};
  const auto judge = [](const std::vector<ContractChange>& changes) {
    return contract_check("registry_contract", changes);
  };
  EXPECT_EQ(judge(right).verdict, CheckVerdict::kPass);
  // An incompatible schema the registry took: the rule is not enforced.
  const Check check =
      judged_after(right, judge, [](std::vector<ContractChange>& changes) { changes[1].registry_status = 200; });
  EXPECT_EQ(check.verdict, CheckVerdict::kFail);
  EXPECT_NE(check.detail.find("direct (incompatible): 200 WRONG"), std::string::npos) << check.detail;
  // A compatible change refused, or one with no answer seen, fails too.
  for (const auto& [change, status] : {std::pair{0, 409}, std::pair{2, 0}}) {
    EXPECT_EQ(judged_after(right, judge,
                           [&](std::vector<ContractChange>& changes) { changes[change].registry_status = status; })
                  .verdict,
              CheckVerdict::kFail);
  }
  EXPECT_EQ(contract_check("registry_contract", {}).verdict, CheckVerdict::kSkipped);
}

TEST(DrillChecksTest, CompactionHoldsOnlyWhenEveryTableCommittedWithFewerFiles) {
  const std::vector<CompactionOutcome> good = {{"db.a", true, 40, 3}, {"db.b", true, 12, 2}};
  const auto judge = [](const std::vector<CompactionOutcome>& compactions) {
    return compaction_check("files_compacted", compactions);
  };
  EXPECT_EQ(judge(good).verdict, CheckVerdict::kPass);
  const Check check =
      judged_after(good, judge, [](std::vector<CompactionOutcome>& compactions) { compactions[1].files_after = 12; });
  EXPECT_EQ(check.verdict, CheckVerdict::kFail);
  EXPECT_NE(check.detail.find("db.b: 12 -> 12 files NOT FEWER"), std::string::npos) << check.detail;
  EXPECT_EQ(
      judged_after(good, judge, [](std::vector<CompactionOutcome>& compactions) { compactions[0].committed = false; })
          .verdict,
      CheckVerdict::kFail);
  EXPECT_EQ(compaction_check("files_compacted", {}).verdict, CheckVerdict::kSkipped);
}

}  // namespace
}  // namespace binberg::drill
