#pragma once

// Checks over every snapshot a table has committed, not only its current one: what a reader who
// looked at any moment could have seen. A reconcile proves the end state; these prove the way there.
//
//   - every snapshot of a current-state table sums a column to the same total (a transfer workload
//     keeps the sum at every source commit, so a snapshot holding part of a transaction, or a change
//     lost or applied twice, breaks it);
//   - every snapshot of a changelog adds whole source transactions only, each once, and a
//     transaction over several tables arrives in all of them in the same commit.

#include <cstdint>
#include <string>
#include <vector>

#include "iceberg/catalog.h"

namespace binberg::verify {

struct HistoryFinding {
  std::size_t snapshots_checked = 0;
  std::size_t transactions_checked = 0;  // whole-transaction check only
  std::size_t violation_count = 0;
  std::vector<std::string> violations;  // the first ones: each names the table, the snapshot and what broke
};

// Over every snapshot of TABLE (a current-state table): the sum of integer column COLUMN is TOTAL.
HistoryFinding check_every_snapshot_sums_to(iceberg::Catalog& catalog, const iceberg::TableIdentifier& table,
                                            const std::string& column, std::int64_t total);

// Over every snapshot of CHANGELOGS (changelog tables written by one writer): each snapshot adds
// every event of a source transaction (by _gtid; the initial copy's rows count as one per position)
// or none of them, a transaction arrives once, and in the same commit (binberg.commit-id) in every
// table it touched.
HistoryFinding check_whole_transactions(iceberg::Catalog& catalog,
                                        const std::vector<iceberg::TableIdentifier>& changelogs);

}  // namespace binberg::verify
