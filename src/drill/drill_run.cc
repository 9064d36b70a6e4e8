#include "drill/drill_run.h"

#include <fmt/format.h>
#include <signal.h>

#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "core/assert.h"
#include "core/error.h"

namespace binberg::drill {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

DrillRun::DrillRun(const DrillOptions& options, const Drill& drill, const lab::Endpoints& stack,
                   std::filesystem::path work_dir, std::filesystem::path logs_dir, evidence::RunRecord& record)
    : options_(options),
      drill_(drill),
      stack_(stack),
      dir_(std::move(work_dir)),
      logs_dir_(std::move(logs_dir)),
      record_(record) {
  for (const auto& dir : {dir_, logs_dir_}) {
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  }
  std::random_device random;
  prefix_ = fmt::format("d{:08x}", random());
}

DrillRun::~DrillRun() {
  for (auto& [name, process] : processes_) process->stop(SIGKILL);
}

void DrillRun::mark(evidence::Phase phase, std::string signal, std::string detail, std::int64_t at_ms) {
  record_.timeline.push_back(evidence::TimelineEvent{phase, at_ms, std::move(signal), std::move(detail)});
}

void DrillRun::check(evidence::Check check) {
  progress(fmt::format("check {}: {}{}", check.name, evidence::to_string(check.verdict),
                       check.verdict == evidence::CheckVerdict::kPass ? "" : " (" + check.detail + ")"));
  record_.checks.push_back(std::move(check));
}

void DrillRun::progress(const std::string& text) const {
  std::cout << fmt::format("  {}: {}\n", drill_.name, text) << std::flush;
}

lab::ChildProcess& DrillRun::start(const std::string& name, const std::vector<std::string>& args,
                                   const Environment& environment) {
  auto& process = processes_[name];
  if (!process) process = std::make_unique<lab::ChildProcess>();
  std::vector<std::string> argv{options_.binberg.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  process->start(argv, log(name), environment);
  return *process;
}

lab::ChildProcess& DrillRun::process(const std::string& name) {
  const auto at = processes_.find(name);
  BINBERG_ASSERT(at != processes_.end(), "drill {} has no process {}", drill_.name, name);
  return *at->second;
}

DrillRun::Finished DrillRun::run_to_end(const std::string& name, const std::vector<std::string>& args,
                                        std::chrono::seconds timeout) {
  lab::ChildProcess child;
  std::vector<std::string> argv{options_.binberg.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::filesystem::path output = dir_ / (name + ".out");
  child.start(argv, log(name), {}, output);
  const std::optional<int> status = child.wait_for_exit(timeout);
  if (!status) {
    child.stop(SIGKILL);
    throw DrillAborted(
        fmt::format("binberg {} did not finish within {} s (log: {})", name, timeout.count(), log(name).string()));
  }
  std::ifstream in(output);
  std::stringstream text;
  text << in.rdbuf();
  return Finished{*status, text.str()};
}

mysql::Connection DrillRun::admin() const {
  return mysql::Connection::open(lab::mariadb_options(stack_.mariadb(), lab::MariadbRole::kAdmin));
}

mysql::BinlogPosition DrillRun::source_position() const {
  mysql::Connection connection = admin();
  const mysql::ResultSet status = connection.query("SHOW MASTER STATUS");
  if (status.rows.empty()) fail("SHOW MASTER STATUS on {} is empty: binary logging is off", stack_.mariadb().host);
  const auto& row = status.rows.front();
  return mysql::BinlogPosition{row.at(0).value_or(""), std::stoull(row.at(1).value_or("0"))};
}

void DrillRun::abort_waiting(const std::string& what, std::chrono::milliseconds timeout) const {
  throw DrillAborted(fmt::format("gave up after {} s waiting for {}", timeout.count() / 1000, what));
}

}  // namespace binberg::drill
