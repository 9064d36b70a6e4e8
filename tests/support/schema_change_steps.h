#pragma once

// The schema changes the evolution tests of both paths make on the generator's tables mid-stream,
// and what the Iceberg tables must look like after them: one sequence, so path A and path B are
// held to the same outcome.

#include <string>

#include "iceberg/catalog.h"
#include "mysql/connection.h"

namespace binberg::testing {

// Adds `tier` (NOT NULL DEFAULT 3: existing rows get 3) and `memo` (nullable) to ACCOUNTS.
std::string add_tier_and_memo(const std::string& accounts);

// Widens ORDERS' quantity and amount (and gives quantity values only BIGINT holds), renames
// ACCOUNTS' memo to remark and tier (NOT NULL) to grade, adds ORDERS' scratch, fills it and drops
// it again. Some statements spell columns in another case than their definitions, as MySQL allows.
void widen_rename_add_and_drop(mysql::Connection& db, const std::string& accounts, const std::string& orders);

// The tables in NS after those changes: new fields with fresh ids, the rename, the promotion, the
// drop from the current state, and the dropped column's history kept in the changelog.
void expect_evolved_tables(iceberg::Catalog& catalog, const std::string& ns, const std::string& accounts,
                           const std::string& orders);

}  // namespace binberg::testing
