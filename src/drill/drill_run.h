#pragma once

// One drill as it runs: its options, the stack, its folder (configurations, catalogs, process
// logs), the binberg processes it started, and the run record it fills — timeline, checks,
// reconcile results, samples. Drills (drills.cc) are written against this and the pipelines
// (path_a.h, path_b.h); they never sleep to wait for something that has a signal.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "drill/drill.h"
#include "evidence/run_record.h"
#include "lab/child_process.h"
#include "lab/endpoints.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"

namespace binberg::drill {

std::int64_t unix_ms();

// Environment for a child: variables to set (value) or unset (nullopt).
using Environment = std::map<std::string, std::optional<std::string>>;

// A drill gives up (the record says so, the verdict is FAIL) when a step it waits for never comes.
class DrillAborted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DrillRun {
 public:
  // WORK_DIR holds configurations, catalogs and warehouses; LOGS_DIR the processes' logs (kept
  // with the run record, their SHA-256 in it).
  DrillRun(const DrillOptions& options, const Drill& drill, const lab::Endpoints& stack, std::filesystem::path work_dir,
           std::filesystem::path logs_dir, evidence::RunRecord& record);
  ~DrillRun();  // SIGKILLs what still runs
  DrillRun(const DrillRun&) = delete;
  DrillRun& operator=(const DrillRun&) = delete;

  const DrillOptions& options() const { return options_; }
  const Drill& drill() const { return drill_; }
  const lab::Endpoints& stack() const { return stack_; }
  const std::filesystem::path& dir() const { return dir_; }
  // The prefix of this run's source tables (unique per run: "d" + 8 hex digits).
  const std::string& prefix() const { return prefix_; }
  evidence::RunRecord& record() { return record_; }

  // The record's timeline; AT_MS is when the signal says it happened.
  void mark(evidence::Phase phase, std::string signal, std::string detail, std::int64_t at_ms);
  void check(evidence::Check check);
  // A line on the terminal: "  <drill>: TEXT".
  void progress(const std::string& text) const;

  // Starts `binberg ARGS...` as NAME (its log: <logs dir>/NAME.log, appended across restarts).
  lab::ChildProcess& start(const std::string& name, const std::vector<std::string>& args,
                           const Environment& environment = {});
  lab::ChildProcess& process(const std::string& name);
  std::filesystem::path log(const std::string& name) const { return logs_dir_ / (name + ".log"); }
  const std::filesystem::path& logs_dir() const { return logs_dir_; }
  // Runs `binberg ARGS...` to its end; its standard output (stderr goes to NAME's log).
  struct Finished {
    int exit_status = 0;
    std::string output;
  };
  Finished run_to_end(const std::string& name, const std::vector<std::string>& args,
                      std::chrono::seconds timeout = std::chrono::seconds(600));

  // The stack's MariaDB as its admin user; the position of its binlog now (SHOW MASTER STATUS).
  mysql::Connection admin() const;
  mysql::BinlogPosition source_position() const;

  // Waits for CONDITION, polling every 100 ms; throws DrillAborted naming WHAT after TIMEOUT.
  template <typename Condition>
  void wait_for(const std::string& what, std::chrono::milliseconds timeout, Condition condition) const;

 private:
  [[noreturn]] void abort_waiting(const std::string& what, std::chrono::milliseconds timeout) const;
  const DrillOptions& options_;
  const Drill& drill_;
  const lab::Endpoints& stack_;
  std::filesystem::path dir_, logs_dir_;
  std::string prefix_;
  evidence::RunRecord& record_;
  std::map<std::string, std::unique_ptr<lab::ChildProcess>> processes_;
};

template <typename Condition>
void DrillRun::wait_for(const std::string& what, std::chrono::milliseconds timeout, Condition condition) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) abort_waiting(what, timeout);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace binberg::drill
