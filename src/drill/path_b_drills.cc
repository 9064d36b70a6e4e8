#include "drill/path_b_drills.h"

#include <fmt/format.h>
#include <signal.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "drill/checks.h"
#include "drill/pipeline.h"
#include "drill/signals.h"
#include "drill/skeleton.h"
#include "registry/registry_client.h"

namespace binberg::drill {
namespace {

using evidence::Phase;

constexpr std::size_t kIntrudersPerRound = 5;
// The sink diverts intruders within about a second; one it has not diverted by then it applied.
constexpr std::chrono::seconds kDiversionTimeout{20};

// The first line of PROCESS's log past byte FROM holding TEXT, waiting up to TIMEOUT; nullopt when
// none came (a fault the system did not detect: the drill goes on, and faults_detected says so).
std::optional<LogLine> await_log_line(DrillRun& run, const std::string& process, const std::string& text,
                                      std::uintmax_t from, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (std::optional<LogLine> line = find_log_line(run.log(process), text, from)) return line;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// As await_log_line for a line the drill cannot go on without: gives the drill up after kStepTimeout.
LogLine wait_for_log_line(DrillRun& run, const std::string& process, const std::string& text, std::uintmax_t from) {
  std::optional<LogLine> line = await_log_line(run, process, text, from, kStepTimeout);
  if (!line) {
    throw DrillAborted(
        fmt::format("gave up after {} s waiting for {}'s log to say \"{}\"", kStepTimeout.count(), process, text));
  }
  return *line;
}

// The topic binberg source writes TABLE of the drill's workload to.
std::string topic_of(DrillRun& run, const std::string& table) {
  return fmt::format("{}.{}.{}", run.prefix(), run.stack().mariadb().database, table);
}

// The drill's changes to the ledger's contract (under_contract_changes), in round order.
enum class ContractRoundKind { kDirectRegistration, kAddColumn, kNarrowing };

// Writes a row of balance 0 (the ledger's sum stays) to TABLE, the workload's ledger, under a key
// the transfers never use, so that the table has a change right after a statement. Returns the
// source position before it: a table's snapshot records the position of the last change it holds,
// which for this row is where its transaction begins.
mysql::BinlogPosition mark_ledger(DrillRun& run, const std::string& table, std::size_t round) {
  const mysql::BinlogPosition before = run.source_position();
  run.admin().execute(
      fmt::format("INSERT IGNORE INTO {} (id, balance) VALUES ({}, 0)", table, 900'000'000'000 + round));
  return before;
}

// A copy of the subject's latest value schema with the ledger's balance made a string:
// no BACKWARD reader of the older records (long) can read it.
std::string incompatible_schema(const std::string& latest) {
  nlohmann::json schema = nlohmann::json::parse(latest);
  bool changed = false;
  const std::function<void(nlohmann::json&)> visit = [&](nlohmann::json& node) {
    if (changed) return;
    if (node.is_object() && node.value("name", "") == "balance" && node.contains("type")) {
      node["type"] = "string";
      changed = true;
      return;
    }
    if (node.is_structured()) {
      for (auto& child : node) visit(child);
    }
  };
  visit(schema);
  if (!changed) throw DrillAborted("the ledger's value schema has no field balance: " + latest.substr(0, 200));
  return schema.dump();
}

// The HTTP status in a registry error's text ("... answered 409 ..."); 0 when it names none.
int answered_status(const std::string& text) {
  const std::size_t at = text.find("answered ");
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + 9);
}

// SIGTERMs process NAME of PATH, waits for its clean exit, and starts it with EXTRA_ARGS.
void restart_cleanly(DrillRun& run, Pipeline& path, const std::string& name,
                     const std::vector<std::string>& extra_args) {
  lab::ChildProcess& process = run.process(name);
  process.send(SIGTERM);
  const std::optional<int> status = process.wait_for_exit(kStepTimeout);
  if (status != 0)
    throw DrillAborted(
        fmt::format("{} did not stop cleanly on SIGTERM: {}", name, status ? exit_text(*status) : "still running"));
  path.start_process(name, {}, extra_args);
}

// A round of under_contract_changes on TABLE, the workload's ledger: each change injects, detects
// and records the registry's answer in CHANGES, then waits for the table to hold a row written
// right after it.
class ContractRound {
 public:
  ContractRound(DrillRun& run, Pipeline& path, std::string table, std::vector<ContractChange>& changes)
      : run_(run),
        path_(path),
        table_(std::move(table)),
        subject_(registry::value_subject(topic_of(run, table_))),
        registry_(registry::RegistryOptions{run.stack().registry_url()}),
        changes_(changes),
        source_from_(log_size(run.log("source"))),
        sink_from_(log_size(run.log("sink"))) {}

  // An incompatible value schema (balance: long to string) POSTed to the registry.
  FaultTimes register_incompatible(FaultTimes times, std::size_t round) {
    const std::string schema = incompatible_schema(registry_.latest_version(subject_).schema);
    run_.mark(Phase::kInject, "incompatible schema registered over HTTP (balance: long to string)", subject_,
              times.inject_ms);
    int status = 200;
    try {
      registry_.register_schema(subject_, schema);
    } catch (const registry::RegistryError& error) {
      status = error.http_status();
    }
    times.detect_ms = unix_ms();
    times.detected = status == 409;
    run_.mark(Phase::kDetect, fmt::format("registry answered {}", status), subject_, times.detect_ms);
    changes_.push_back({"balance long to string (registered directly)", false, status});
    return recovered(times, mark_ledger(run_, table_, round));
  }

  // ALTER TABLE ADD COLUMN, nullable: registered by the source, evolved by the sink.
  FaultTimes add_column(FaultTimes times, std::size_t round) {
    run_.admin().execute(fmt::format("ALTER TABLE {} ADD COLUMN drill_note VARCHAR(32) NULL", table_));
    const mysql::BinlogPosition marked = mark_ledger(run_, table_, round);
    run_.mark(Phase::kInject, "ALTER TABLE ADD COLUMN drill_note VARCHAR(32) NULL", table_, times.inject_ms);
    const LogLine applied = wait_for_log_line(run_, "sink", ") applied", sink_from_);
    times.detected = applied.text.find(table_) != std::string::npos;
    times.detect_ms = applied.at_ms;
    run_.mark(Phase::kDetect, "sink log: schema change applied", applied.text.substr(0, 200), times.detect_ms);
    const bool registered = registry_.latest_version(subject_).schema.find("drill_note") != std::string::npos;
    changes_.push_back({"ADD COLUMN drill_note (by the source)", true, registered ? 200 : 0});
    return recovered(times, marked);
  }

  // ALTER TABLE MODIFY narrowing BIGINT to INT: refused by the registry (the source stops the
  // table), then the operator's two steps: the subject's rule NONE and a source restart; once the
  // sink refused the narrowing by its own policy, a sink restart with --accept-schema-change.
  FaultTimes narrow_and_accept(FaultTimes times, std::size_t round) {
    mysql::Connection admin = run_.admin();
    admin.execute(fmt::format("ALTER TABLE {} MODIFY COLUMN balance INT NOT NULL", table_));
    const std::string gtid = admin.scalar("SELECT @@last_gtid").value_or("");
    const mysql::BinlogPosition marked = mark_ledger(run_, table_, round);
    run_.mark(Phase::kInject, "ALTER TABLE MODIFY COLUMN balance INT NOT NULL", table_ + ", transaction " + gtid,
              times.inject_ms);
    const LogLine refused = wait_for_log_line(run_, "source", "the registry refused the new schema of", source_from_);
    times.detected = refused.text.find(subject_) != std::string::npos;
    times.detect_ms = refused.at_ms;
    run_.mark(Phase::kDetect, "source log: the registry refused the new schema", refused.text.substr(0, 200),
              times.detect_ms);
    changes_.push_back({"MODIFY balance BIGINT to INT (by the source)", false, answered_status(refused.text)});
    registry_.set_compatibility(subject_, "NONE");
    restart_cleanly(run_, path_, "source", {});
    run_.mark(Phase::kNote, "operator: subject rule NONE, source restarted", subject_, unix_ms());
    const LogLine stopped = wait_for_log_line(run_, "sink", ") refused: ", sink_from_);
    run_.mark(Phase::kNote, "sink log: the narrowing refused by its policy, the table stopped",
              stopped.text.substr(0, 200), stopped.at_ms);
    restart_cleanly(run_, path_, "sink", {"--accept-schema-change", gtid});
    run_.mark(Phase::kNote, "operator: sink restarted with --accept-schema-change", gtid, unix_ms());
    return recovered(times, marked);
  }

 private:
  FaultTimes recovered(FaultTimes times, const mysql::BinlogPosition& marked) {
    times.recover_ms = path_.wait_until_table_contains(table_, marked, kStepTimeout);
    run_.mark(Phase::kRecover, "snapshot summary: binberg.sink.offsets of " + table_, "holds " + marked.to_string(),
              times.recover_ms);
    return times;
  }

  DrillRun& run_;
  Pipeline& path_;
  std::string table_, subject_;
  registry::RegistryClient registry_;
  std::vector<ContractChange>& changes_;
  std::uintmax_t source_from_, sink_from_;
};

}  // namespace

// Path B under load, an outside producer writes intruders of KIND into the ledger's topic
// (drill/intruder.h), kIntrudersPerRound at a time; the sink must divert each to `<topic>.dlq`
// (poison) or `<topic>.quarantine` (mis-keyed) and apply none. Detected by the sink's log line for
// the first diverted one; recovered once the tables hold what the source held at the intrusion.
void under_intruders(DrillRun& run, IntruderKind kind) {
  const std::string suffix = kind == IntruderKind::kPoison ? ".dlq" : ".quarantine";
  std::optional<Intruder> intruder;
  std::string topic;
  const Fault intrude = [&](DrillRun&, Paths& paths, Workload& workload, std::size_t) {
    if (!intruder) {
      topic = topic_of(run, workload.ledger());
      intruder.emplace(run, topic);
    }
    FaultTimes times;
    const std::uintmax_t from = log_size(run.log("sink"));
    const mysql::BinlogPosition position = run.source_position();
    times.inject_ms = unix_ms();
    intruder->write(kind, kIntrudersPerRound);
    run.mark(Phase::kInject,
             fmt::format("{} {} records written into {}", kIntrudersPerRound,
                         kind == IntruderKind::kPoison ? "poison" : "mis-keyed", topic),
             "source at " + position.to_string(), times.inject_ms);
    const std::optional<LogLine> diverted =
        await_log_line(run, "sink", "-> " + topic + suffix, from, kDiversionTimeout);
    times.detected = diverted.has_value();
    times.detect_ms = diverted ? diverted->at_ms : unix_ms();
    run.mark(Phase::kDetect, diverted ? "sink log: a record -> " + topic + suffix : "no record diverted",
             diverted ? "" : fmt::format("none within {} s", kDiversionTimeout.count()), times.detect_ms);
    times.recover_ms = paths.wait_until_tables_contain(position, kStepTimeout);
    run.mark(Phase::kRecover, "snapshot summary: binberg.sink.offsets", "tables hold " + position.to_string(),
             times.recover_ms);
    return times;
  };
  // Mis-keyed: one round at --quick, so that a sink whose gate let one through (its position past
  // the binlog's: drill/intruder.h) still reaches verify, where it fails, rather than stalling there.
  const std::size_t quick_rounds = kind == IntruderKind::kPoison ? 2 : 1;
  under_faults(run, PathChoice::kB, rounds(run, quick_rounds, 4), FaultGate::kCommittedProgress, intrude);
  run.check(diversion_check(kind == IntruderKind::kPoison ? "intruders_dead_lettered" : "intruders_quarantined",
                            intruder ? intruder->written() : 0,
                            intruder ? intruder->diverted(suffix) : DivertedRecords{}, topic + suffix));
}

// Path B under load, each round rebuilds the sink's tables into a fresh namespace with `binberg
// sink --rebuild` while the sink goes on (sink/sink_rebuild.h): from offset 0 in even rounds, from
// the moment the round before began in odd ones (a commit of the original seeds it). Each rebuild
// compares its tables with the originals by digest. Inject: the rebuild starts; detected and
// recovered: it exits 0 with its report.
void under_rebuilds(DrillRun& run) {
  std::vector<RebuildOutcome> rebuilds;
  std::size_t tables = 0;
  std::int64_t round_began_ms = 0;
  const Fault rebuild = [&](DrillRun&, Paths& paths, Workload& workload, std::size_t round) {
    FaultTimes times;
    tables = 2 * workload.tables().size();  // each a current-state table and a changelog
    const std::string ns = fmt::format("{}_rebuild_{}", run.prefix(), round);
    RebuildOutcome& outcome = rebuilds.emplace_back();
    outcome.from = round % 2 == 0 ? "offset:0" : fmt::format("timestamp:{}", round_began_ms);
    times.inject_ms = round_began_ms = unix_ms();
    run.mark(Phase::kInject, "binberg sink --rebuild started", ns + " from " + outcome.from, times.inject_ms);
    const DrillRun::Finished finished = run.run_to_end("rebuild",
                                                       {"sink", "--config", paths.owner_of("sink").config().string(),
                                                        "--rebuild", ns, "--from", outcome.from, "--json"},
                                                       kStepTimeout);
    times.detect_ms = times.recover_ms = unix_ms();
    outcome.exit_status = finished.exit_status;
    outcome.report = nlohmann::json::parse(finished.output, nullptr, false);
    if (outcome.report.is_discarded()) outcome.report = nullptr;
    times.detected = outcome.report.is_object();  // exit 0, or 3 when a table differs: rebuilt either way
    run.mark(Phase::kDetect, fmt::format("binberg sink --rebuild {}", exit_text(finished.exit_status)),
             outcome.report.is_object() ? fmt::format("report: equal {}", outcome.report.value("equal", false))
                                        : "no report",
             times.detect_ms);
    run.mark(Phase::kRecover, "rebuild report read", ns, times.recover_ms);
    return times;
  };
  under_faults(run, PathChoice::kB, rounds(run, 2, 4), FaultGate::kCommittedProgress, rebuild);
  run.check(rebuilds_check("rebuilds_equal", rebuilds, tables));
}

// Path B under load, three changes to the ledger's schema contract, one per round (the subject's
// rule is the stack's global BACKWARD). The ledger, as its transfers are one table's transactions:
// a stopped table commits its part of a transaction over several tables apart from the others,
// which whole_transactions_path_b counts, so a statement the sink refuses on the generator's
// tables would fail this drill on that rather than on the contract it is about.
//   direct        an incompatible value schema (a field's type changed) registered over HTTP: the
//                 registry answers 409 (detected) and the pipeline never notices;
//   add-column    ALTER TABLE ADD COLUMN, nullable: the registry takes the next schema and the sink
//                 evolves its tables (detected by the sink's "applied" line);
//   narrowing     ALTER TABLE MODIFY narrowing BIGINT to INT: the registry refuses it and the
//                 source stops that table alone (detected by its log line); the operator sets the
//                 subject's rule to NONE and restarts the source; the sink refuses the narrowing by
//                 its own policy and stops that table alone; the operator restarts it with
//                 --accept-schema-change <GTID>.
// Recovered once the ledger's table holds a row written after the change. Extra check
// registry_contract (checks.h).
void under_contract_changes(DrillRun& run) {
  std::vector<ContractChange> changes;
  const Fault change = [&](DrillRun&, Paths& paths, Workload& workload, std::size_t round) {
    ContractRound contract(run, paths.owner_of("sink"), workload.ledger(), changes);
    FaultTimes times;
    times.inject_ms = unix_ms();
    switch (static_cast<ContractRoundKind>(round)) {
      case ContractRoundKind::kDirectRegistration:
        return contract.register_incompatible(times, round);
      case ContractRoundKind::kAddColumn:
        return contract.add_column(times, round);
      case ContractRoundKind::kNarrowing:
        return contract.narrow_and_accept(times, round);
    }
    throw DrillAborted(fmt::format("schema-contract has no round {}", round));
  };
  under_faults(run, PathChoice::kB, 3, FaultGate::kCommittedProgress, change);
  run.check(contract_check("registry_contract", changes));
}

}  // namespace binberg::drill
