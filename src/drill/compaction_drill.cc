#include "drill/compaction_drill.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "drill/checks.h"
#include "drill/pipeline.h"
#include "drill/signals.h"
#include "drill/skeleton.h"
#include "iceberg/catalog.h"
#include "iceberg/manifest_list.h"
#include "iceberg/table_scan.h"

namespace binberg::drill {
namespace {

using evidence::Phase;

void add_point(DrillRun& run, const std::string& series, const char* unit, const std::string& description,
               std::int64_t at_ms, double value) {
  evidence::Series& samples = run.record().samples[series];
  samples.unit = unit;
  samples.description = description;
  samples.points.emplace_back(at_ms, value);
}

// Records SHAPE of a table as points of the run's samples, WHEN ("before" or "after").
void record_shape(DrillRun& run, const std::string& when, const TableShape& shape, std::int64_t at_ms) {
  const std::string of = " of a current-state table " + when + " its compaction, per table and round";
  add_point(run, "live_files_" + when, "files", "live data and delete files" + of, at_ms,
            static_cast<double>(shape.data_files + shape.delete_files));
  add_point(run, "manifests_" + when, "files", "manifests" + of, at_ms, static_cast<double>(shape.manifests));
  add_point(run, "file_bytes_" + when, "bytes", "bytes of the live files" + of, at_ms,
            static_cast<double>(shape.bytes));
  add_point(run, "scan_plan_ms_" + when, "ms", fmt::format("median of {} timed scan plans{}", kTimedPlans, of), at_ms,
            shape.plan_ms_median);
}

std::string shape_text(const TableShape& shape) {
  return fmt::format("{} data + {} delete files, {} manifests, {} bytes, scan plan {:.2f} ms", shape.data_files,
                     shape.delete_files, shape.manifests, shape.bytes, shape.plan_ms_median);
}

}  // namespace

TableShape measure_table(const iceberg::TableMetadata& metadata, std::optional<std::int64_t> snapshot_id) {
  TableShape shape;
  const iceberg::Snapshot* snapshot = snapshot_id ? metadata.find_snapshot(*snapshot_id) : metadata.current_snapshot();
  if (snapshot == nullptr) return shape;
  shape.snapshot_id = snapshot->snapshot_id;
  shape.manifests = iceberg::read_manifest_list(snapshot->manifest_list).size();
  std::vector<double> plan_ms;
  for (int i = 0; i < kTimedPlans; ++i) {
    const auto started = std::chrono::steady_clock::now();
    const iceberg::ScanPlan plan = iceberg::plan_scan(metadata, shape.snapshot_id);
    plan_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    if (i > 0) continue;
    shape.data_files = plan.data_files.size();
    shape.delete_files = plan.delete_files.size();
    for (const auto* files : {&plan.data_files, &plan.delete_files}) {
      for (const iceberg::LiveFile& live : *files) shape.bytes += live.file.file_size_in_bytes;
    }
  }
  std::nth_element(plan_ms.begin(), plan_ms.begin() + kTimedPlans / 2, plan_ms.end());
  shape.plan_ms_median = plan_ms[kTimedPlans / 2];
  return shape;
}

// Path A under load; replicate commits every 200 ms, so each commit adds small data files, and
// every update or delete delete files, to the current-state tables. Once each has 20 (full size:
// 40) more commits, the drill measures each of them (measure_table), runs `binberg table compact`
// on it while replicate goes on, and measures the snapshot the compaction committed. Inject: the
// first compaction starts; detected: every compaction exited 0 having committed; recovered: the
// tables hold the source position at the start (replicate went on committing through the
// rewrites). Extra check files_compacted.
void under_compaction(DrillRun& run) {
  std::vector<CompactionOutcome> compactions;
  const Fault compact = [&](DrillRun&, Paths& paths, Workload& workload, std::size_t) {
    Pipeline& path = paths.owner_of("replicate");
    const std::string database = run.stack().mariadb().database;
    // Many small commits first: each table's snapshots grow by SMALL_COMMITS.
    const std::size_t small_commits = run.options().size == DrillSize::kQuick ? 20 : 40;
    const auto snapshots_of = [&](const std::string& table) {
      return path.catalog().load_table(iceberg::TableIdentifier{database, table}).metadata.snapshots.size();
    };
    std::vector<std::size_t> enough;
    for (const std::string& table : workload.tables()) enough.push_back(snapshots_of(table) + small_commits);
    run.wait_for(fmt::format("{} more commits of every current-state table", small_commits), kStepTimeout, [&] {
      for (std::size_t i = 0; i < enough.size(); ++i) {
        if (snapshots_of(workload.tables()[i]) < enough[i]) return false;
      }
      return true;
    });
    FaultTimes times;
    const mysql::BinlogPosition position = run.source_position();
    times.inject_ms = unix_ms();
    run.mark(Phase::kInject, "binberg table compact under load", "source at " + position.to_string(), times.inject_ms);
    times.detected = true;
    for (const std::string& table : workload.tables()) {
      const iceberg::TableIdentifier id{database, table};
      CompactionOutcome& outcome = compactions.emplace_back(CompactionOutcome{id.to_string()});
      const TableShape before = measure_table(path.catalog().load_table(id).metadata);
      record_shape(run, "before", before, unix_ms());
      const DrillRun::Finished finished = run.run_to_end(
          "compact", {"table", "compact", id.to_string(), "--config", path.config().string(), "--json"}, kStepTimeout);
      const nlohmann::json report = nlohmann::json::parse(finished.output, nullptr, false);
      const nlohmann::json snapshot = report.is_object() ? report.value("snapshot-id", nlohmann::json()) : nullptr;
      outcome.committed = finished.exit_status == 0 && snapshot.is_number_integer();
      times.detected = times.detected && outcome.committed;
      outcome.files_before = before.data_files + before.delete_files;
      if (!outcome.committed) {
        run.mark(Phase::kNote, "compaction did not commit",
                 fmt::format("{}: {}", id.to_string(), exit_text(finished.exit_status)), unix_ms());
        continue;
      }
      const TableShape after = measure_table(path.catalog().load_table(id).metadata, snapshot.get<std::int64_t>());
      record_shape(run, "after", after, unix_ms());
      outcome.files_after = after.data_files + after.delete_files;
      run.mark(Phase::kNote, "compacted " + id.to_string(),
               fmt::format("before: {}; after: {}", shape_text(before), shape_text(after)), unix_ms());
    }
    times.detect_ms = unix_ms();
    run.mark(Phase::kDetect, "binberg table compact: snapshots committed", "", times.detect_ms);
    times.recover_ms = path.wait_until_tables_contain(position, kStepTimeout);
    run.mark(Phase::kRecover, "snapshot summary: binberg.source position", "tables hold " + position.to_string(),
             times.recover_ms);
    return times;
  };
  under_faults(run, PathChoice::kA, 1, FaultGate::kCommittedProgress, compact);
  run.check(compaction_check("files_compacted", compactions));
}

}  // namespace binberg::drill
