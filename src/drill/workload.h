#pragma once

// The drills' source workload, on two threads against the stack's MariaDB:
//   - `binberg gen`'s generator (lab/workload.h) over <prefix>_accounts and <prefix>_orders: mixed
//     inserts, updates and deletes, hot keys, multi-table transactions, key changes;
//   - transfers over <prefix>_ledger: each transaction moves amounts between 2 to 6 accounts, so
//     the ledger's sum is the same after every source commit, and any snapshot that holds part of
//     a transfer, or a change lost or applied twice, shows another sum.
// A phase runs until the generator has produced its row events and the drill finishes it; the
// transfers go on until then, so the pipeline keeps committing while a drill injects faults. A
// connection lost mid-phase (the source killed) ends the phase with that error: a new phase
// reloads the generator's keys from the server (a commit whose answer was lost may or may not
// have happened).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "drill/drill_run.h"

namespace binberg::drill {

struct PhaseResult {
  std::uint64_t events = 0;           // generator row events committed
  std::uint64_t transfers = 0;        // transfer transactions committed
  std::uint64_t transfer_events = 0;  // their row events (an update that moved nothing logs none)
  std::uint64_t row_events() const { return events + transfer_events; }
  std::string error;  // why it ended early, if it did
};

class Workload {
 public:
  static constexpr std::int64_t kLedgerAccounts = 200;
  static constexpr std::int64_t kOpeningBalance = 1'000'000;

  // Creates the tables (dropping older ones of the same prefix) and loads INITIAL_ROWS rows into
  // each generator table and the ledger's accounts.
  Workload(DrillRun& run, std::uint64_t initial_rows);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // The tables, unqualified: <prefix>_accounts, <prefix>_orders, <prefix>_ledger.
  std::vector<std::string> tables() const;
  std::string ledger() const;
  std::int64_t ledger_total() const { return kLedgerAccounts * kOpeningBalance; }

  // Starts a phase of EVENTS generator row events (seed: the drill's seed + the phase number),
  // paced to last about SPREAD so the drill's faults land while it runs.
  void start(std::uint64_t events, std::chrono::seconds spread);
  // Generator row events committed so far in this phase.
  std::uint64_t events_done() const { return events_done_.load(); }
  bool running() const { return running_.load(); }
  // Generator row events still to come in this phase (0 once it produced them all or failed).
  bool generating() const { return generating_.load(); }
  // Waits for the generator's events, then stops the transfers.
  PhaseResult finish();
  // Ends the phase now (between transactions).
  PhaseResult stop();

 private:
  void run_generator(std::uint64_t events, double rate, std::uint64_t seed);
  void run_transfers(std::uint64_t seed);

  DrillRun& run_;
  std::uint64_t phases_ = 0;
  std::atomic<bool> running_{false}, generating_{false}, stop_{false};
  std::atomic<std::uint64_t> events_done_{0}, transfers_done_{0}, transfer_events_{0};
  std::string generator_error_, transfer_error_;
  std::thread generator_, transfers_;
};

}  // namespace binberg::drill
