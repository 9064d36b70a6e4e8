#include "drill/runner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "core/canonical.h"
#include "core/error.h"
#include "drill/drill_run.h"
#include "drill/provenance.h"
#include "evidence/run_store.h"
#include "lab/child_process.h"

namespace binberg::drill {
namespace {

// The drill stack: started here when its folder has none running, and then stopped at the end.
class DrillStack {
 public:
  explicit DrillStack(const DrillOptions& options) : options_(options) {
    if (!std::filesystem::exists(options_.services_dir / "services.json")) {
      std::cout << fmt::format("drill: starting the drill stack in {} (ports shifted by {})\n",
                               options_.services_dir.string(), options_.port_offset)
                << std::flush;
      services("up");
      started_here_ = true;
    }
    endpoints_ = lab::load(options_.services_dir.string());
  }
  ~DrillStack() {
    if (!started_here_) return;
    try {
      services("down");
    } catch (const std::exception& error) {
      spdlog::warn("drill: the drill stack did not stop: {}", error.what());
    }
  }
  DrillStack(const DrillStack&) = delete;
  DrillStack& operator=(const DrillStack&) = delete;

  const lab::Endpoints& endpoints() const { return endpoints_; }

 private:
  void services(const std::string& action) const {
    lab::ChildProcess process;
    std::filesystem::create_directories(options_.services_dir);
    const std::filesystem::path log = options_.services_dir / "drill-services.log";
    process.start({options_.binberg.string(), "services", action, "--dir", options_.services_dir.string(),
                   "--port-offset", std::to_string(options_.port_offset)},
                  log);
    const std::optional<int> status = process.wait_for_exit(std::chrono::minutes(5));
    if (status != 0) fail("binberg services {} failed: {}", action, lab::log_tail(log, 15));
  }

  const DrillOptions& options_;
  lab::Endpoints endpoints_;
  bool started_here_ = false;
};

std::string file_sha256(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return sha256_hex(bytes.str());
}

evidence::RunRecord run_one(const DrillOptions& options, const Drill& drill, const evidence::RunStore& store,
                            const lab::Endpoints& stack, const nlohmann::json& provenance) {
  evidence::RunRecord record;
  record.run_id = store.run_id();
  record.drill = drill.name;
  record.title = drill.title;
  record.docs = "docs/drills.md#" + drill.name;
  record.seed = options.seed;
  record.quick = options.size == DrillSize::kQuick;
  for (const char path : drill.paths) {
    if (path == 'A' || path == 'B') record.paths.emplace_back(1, path);
  }
  record.config = {{"workload_events", options.workload_events()}, {"port_offset", options.port_offset}};
  record.provenance = provenance;
  record.started_at_ms = unix_ms();
  const std::filesystem::path logs = store.logs_dir(drill.name);
  {
    DrillRun run(options, drill, stack, options.services_dir / "drills" / store.run_id() / drill.name, logs, record);
    run.progress(drill.title);
    try {
      drill.body(run);
    } catch (const std::exception& error) {
      record.error = error.what();
      run.progress("broke off: " + record.error);
    }
  }  // every process of the drill is gone before its logs are hashed
  for (const auto& entry : std::filesystem::directory_iterator(logs)) {
    record.logs.push_back(evidence::FileHash{std::filesystem::relative(entry.path(), store.run_dir()).string(),
                                             file_sha256(entry.path())});
  }
  record.finished_at_ms = unix_ms();
  return record;
}

std::string summary_line(const evidence::RunRecord& record) {
  const std::size_t failed = static_cast<std::size_t>(
      std::count_if(record.checks.begin(), record.checks.end(),
                    [](const evidence::Check& check) { return check.verdict != evidence::CheckVerdict::kPass; }));
  return fmt::format("{:<20} {:<10} {:>8} events  recovery {:>7}  {:>3}/{} checks  {:>6.1f} s{}", record.drill,
                     evidence::to_string(record.verdict()), record.events,
                     record.recovery_seconds ? fmt::format("{:.2f} s", *record.recovery_seconds) : "-",
                     record.checks.size() - failed, record.checks.size(),
                     static_cast<double>(record.finished_at_ms - record.started_at_ms) / 1000,
                     record.error.empty() ? "" : "  (" + record.error.substr(0, 100) + ")");
}

}  // namespace

int run_drills(const DrillOptions& options, const std::vector<std::string>& names,
               const std::vector<std::string>& command_line) {
  std::vector<const Drill*> drills;
  for (const std::string& name : names) {
    if (name == "all") {
      for (const Drill& drill : all_drills()) drills.push_back(&drill);
    } else if (const Drill* drill = find_drill(name)) {
      drills.push_back(drill);
    } else {
      throw ConfigError(fmt::format("drill: no drill named '{}' (binberg drill list)", name));
    }
  }
  DrillStack stack(options);
  evidence::RunStore store = evidence::RunStore::create(options.runs_dir);
  std::cout << fmt::format("drill: run {} ({} drills, {} size, seed {}); records in {}\n", store.run_id(),
                           drills.size(), options.size == DrillSize::kQuick ? "quick" : "full", options.seed,
                           store.run_dir().string())
            << std::flush;
  const nlohmann::json provenance = detect_provenance(stack.endpoints(), command_line);
  std::vector<std::string> summary;
  bool all_passed = true;
  for (const Drill* drill : drills) {
    const evidence::RunRecord record = run_one(options, *drill, store, stack.endpoints(), provenance);
    store.write(record);
    summary.push_back(summary_line(record));
    all_passed = all_passed && record.verdict() == evidence::RunVerdict::kPass;
  }
  store.seal();
  std::cout << fmt::format("\ndrill: run {}\n", store.run_id());
  for (const std::string& line : summary) std::cout << "  " << line << "\n";
  std::cout << fmt::format("records: {}\n", store.run_dir().string()) << std::flush;
  return all_passed ? 0 : 1;
}

}  // namespace binberg::drill
