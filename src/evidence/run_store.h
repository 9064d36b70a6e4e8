#pragma once

// Where run records live: a runs folder of append-only run folders.
//
//   <runs>/<run id>/<drill>.json     one record per drill of the run, written once (O_EXCL)
//   <runs>/<run id>/<drill>/logs/    the logs of the processes the drill ran
//   <runs>/<run id>/manifest.json    written last: the SHA-256 of every record of the run
//
// Nothing is ever overwritten: a new run gets a new id (UTC time + random suffix). A reader
// (binberg report) checks each record against the schema and against its manifest's hash, and
// refuses a folder that fails either, naming the file.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evidence/run_record.h"

namespace binberg::evidence {

class RunStore {
 public:
  // Makes a new run folder under RUNS (created if missing).
  static RunStore create(const std::filesystem::path& runs);

  const std::string& run_id() const { return run_id_; }
  const std::filesystem::path& run_dir() const { return run_dir_; }
  // Where the processes of DRILL keep their logs (created).
  std::filesystem::path logs_dir(const std::string& drill) const;

  // Writes RECORD once as <drill>.json; refuses a second record of the same drill in the run.
  std::filesystem::path write(const RunRecord& record);
  // Writes manifest.json with the SHA-256 of every record written; no record can follow.
  std::filesystem::path seal();

 private:
  RunStore(std::string run_id, std::filesystem::path run_dir)
      : run_id_(std::move(run_id)), run_dir_(std::move(run_dir)) {}
  std::string run_id_;
  std::filesystem::path run_dir_;
  std::vector<std::pair<std::string, std::string>> written_;  // file name, SHA-256
  bool sealed_ = false;
};

struct StoredRecord {
  std::filesystem::path file;
  std::string sha256;
  nlohmann::json record;
};

struct StoredRun {
  std::string run_id;
  std::filesystem::path dir;
  std::vector<StoredRecord> records;
};

// Every sealed run under RUNS, oldest first. Throws Error naming the file when a record does not
// match its manifest's SHA-256, is not valid against the schema, or a manifest lists a missing
// file; runs still being written (no manifest yet) are left out.
std::vector<StoredRun> load_runs(const std::filesystem::path& runs);

// A new run id: UTC time and 8 random hex digits, e.g. 20261207T013015Z-3f9a1c2e.
std::string new_run_id();

}  // namespace binberg::evidence
