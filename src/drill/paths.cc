#include "drill/paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/assert.h"

namespace binberg::drill {

using evidence::Check;
using evidence::Comparison;

Paths::Paths(DrillRun& run, const Workload& workload, PathChoice choice) : run_(run) {
  if (choice != PathChoice::kB) paths_.push_back(std::make_unique<PathA>(run, workload));
  if (choice != PathChoice::kA) paths_.push_back(std::make_unique<PathB>(run, workload));
}

std::string Paths::names() const { return paths_.size() == 2 ? "A and B" : paths_.front()->path(); }

Pipeline& Paths::owner_of(const std::string& process) {
  for (const auto& path : paths_) {
    const std::vector<std::string> names = path->processes();
    if (std::find(names.begin(), names.end(), process) != names.end()) return *path;
  }
  BINBERG_UNREACHABLE("drill {}: no path runs {}", run_.drill().name, process);
}

std::vector<std::string> Paths::processes() const {
  std::vector<std::string> names;
  for (const auto& path : paths_) {
    for (std::string& name : path->processes()) names.push_back(std::move(name));
  }
  return names;
}

void Paths::start(const Environment& environment) {
  for (const auto& path : paths_) path->start(environment);
}

std::size_t Paths::committed_snapshots() {
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (const auto& path : paths_) fewest = std::min(fewest, path->committed_snapshots());
  return fewest;
}

std::int64_t Paths::wait_until_tables_contain(const mysql::BinlogPosition& position, std::chrono::seconds timeout) {
  std::int64_t latest = 0;
  for (const auto& path : paths_) latest = std::max(latest, path->wait_until_tables_contain(position, timeout));
  return latest;
}

std::vector<ProcessExit> Paths::signal_all(int signal, std::chrono::seconds timeout) {
  const std::vector<std::string> names = processes();
  for (const std::string& name : names) {
    BINBERG_ASSERT(run_.process(name).running(), "drill {}: {} is not running", run_.drill().name, name);
    run_.process(name).send(signal);
  }
  std::vector<ProcessExit> exits;
  for (const std::string& name : names) exits.push_back(owner_of(name).wait_for_exit(name, timeout));
  return exits;
}

void Paths::verify(const Workload& workload) {
  for (const auto& path : paths_) path->verify(workload);
  if (paths_.size() == 2) check_parity();
}

void Paths::check_parity() {
  ParityFindings findings = judge_parity(run_.record().reconcile);
  for (nlohmann::json& row : findings.rows) run_.record().parity.push_back(std::move(row));
  run_.check(std::move(findings.check));
}

}  // namespace binberg::drill
