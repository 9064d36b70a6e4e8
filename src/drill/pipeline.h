#pragma once

// A binberg pipeline a drill runs and checks: path A (`binberg replicate`) or path B (`binberg
// source` -> Kafka -> `binberg sink`), with its own configuration, catalog and warehouse in a
// folder of the drill, over the workload's tables.
//
// Verify (the end of every drill) computes, for the pipeline's tables:
//   reconcile_path_<a|b>      `binberg reconcile --json`: rows, digests, keyed diff, event-id audit;
//                             EQUAL is required (INCOMPLETE, a skipped check, is not a pass)
//   ledger_sum_path_<a|b>     the ledger's sum in every snapshot of its Iceberg table
//   whole_transactions_path_<a|b> every changelog snapshot adds whole source transactions, each once,
//                             a multi-table one in one commit
//   clean_stop_path_<a|b>     SIGTERM: each process commits what it read and exits 0

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "drill/checks.h"
#include "drill/drill_run.h"
#include "drill/workload.h"
#include "iceberg/catalog.h"

namespace binberg::drill {

class Pipeline {
 public:
  virtual ~Pipeline() = default;

  const std::string& path() const { return path_; }  // "A" or "B"
  // For check names: "a" or "b".
  std::string lowercase_path() const { return path_ == "A" ? "a" : "b"; }
  const std::filesystem::path& config() const { return config_; }

  // Starts every process, in order (ENVIRONMENT: e.g. BINBERG_FAILPOINTS).
  void start(const Environment& environment = {});
  // (Re)starts process NAME alone, with EXTRA_ARGS after its configuration (e.g. `--from earliest`).
  virtual void start_process(const std::string& name, const Environment& environment = {},
                             const std::vector<std::string>& extra_args = {}) = 0;
  // The names of its processes (DrillRun::process), in the order they start.
  virtual std::vector<std::string> processes() const = 0;

  // SIGKILLs NAME and waits for its exit: detection is its exit status, timed when waitpid saw it.
  ProcessExit kill(const std::string& name);
  // Waits until NAME exits by itself (a crash failpoint); throws DrillAborted after TIMEOUT.
  ProcessExit wait_for_exit(const std::string& name, std::chrono::seconds timeout);

  // Snapshots committed so far over the pipeline's changelogs: its committed progress.
  std::size_t committed_snapshots();
  // Waits until the tables hold every source transaction up to POSITION; returns the commit time
  // (the snapshot's timestamp) of the first snapshot that did. Read from the ledger's table: the
  // transfers change it in every source moment of a drill, so its snapshots always carry a
  // position (a path B sink records one per table, once it read everything before it).
  std::int64_t wait_until_tables_contain(const mysql::BinlogPosition& position, std::chrono::seconds timeout);
  // As wait_until_tables_contain, for TABLE alone (its Iceberg name: the source's): a table that
  // stopped while the others went on. TABLE must change after POSITION for its snapshot to show it.
  std::int64_t wait_until_table_contains(const std::string& table, const mysql::BinlogPosition& position,
                                         std::chrono::seconds timeout);

  // Reconcile, the invariants over every snapshot, and a clean stop: checks in the run's record.
  void verify(const Workload& workload);

  // The pipeline's Iceberg catalog, opened once (the drill's own reads: positions, table shapes).
  iceberg::Catalog& catalog();

 protected:
  Pipeline(DrillRun& run, std::string path, const Workload& workload);
  // Writes the configuration: [source], [capture], [iceberg], [commit], [metrics], then EXTRA.
  void write_config(std::uint32_t server_id, const std::string& extra);
  DrillRun& run_;

 private:
  // The position TABLE holds, and when its snapshot was committed.
  std::optional<mysql::BinlogPosition> committed_position(const std::string& table, std::int64_t& committed_at_ms);
  void reconcile();
  void check_history(const Workload& workload);
  void stop_cleanly();

  std::string path_;
  std::vector<std::string> tables_;
  std::string ledger_;
  std::filesystem::path dir_, config_;
  std::unique_ptr<iceberg::Catalog> catalog_;
};

// Path A: `binberg replicate`, its process named "replicate".
class PathA : public Pipeline {
 public:
  PathA(DrillRun& run, const Workload& workload);
  void start_process(const std::string& name, const Environment& environment = {},
                     const std::vector<std::string>& extra_args = {}) override;
  std::vector<std::string> processes() const override { return {"replicate"}; }
};

// Path B: `binberg source` (exactly-once, 3 partitions per topic, topics named after the drill's
// prefix) -> Kafka -> `binberg sink`; processes "source" and "sink". The sink starts once the
// source made its topics.
class PathB : public Pipeline {
 public:
  PathB(DrillRun& run, const Workload& workload);
  void start_process(const std::string& name, const Environment& environment = {},
                     const std::vector<std::string>& extra_args = {}) override;
  std::vector<std::string> processes() const override { return {"source", "sink"}; }
};

}  // namespace binberg::drill
