#include "lab/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "core/error.h"

namespace binberg::lab {
namespace {

constexpr std::uint64_t kBulkRowsPerStatement = 1000;
constexpr std::size_t kAccounts = 0;

// Text with multi-byte UTF-8 and a quote (escaped by doubling, which is valid in every SQL mode).
constexpr const char* kWords[] = {"alpha", "beta", "gamma", "δέλτα", "straße", "o'brien", "字符", "naïve", "z"};

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  out += '\'';
  return out;
}

std::string text(Prng& random, std::uint64_t max_words) {
  std::string out;
  const std::uint64_t words = random.below(max_words + 1);
  for (std::uint64_t i = 0; i < words; ++i) {
    if (i > 0) out += ' ';
    out += kWords[random.below(std::size(kWords))];
  }
  return quoted(out);
}

// A decimal with SCALE 2 and up to DIGITS integer digits.
std::string decimal(Prng& random, int digits) {
  std::int64_t bound = 1;
  for (int i = 0; i < digits; ++i) bound *= 10;
  const std::int64_t cents = random.between(-bound * 100 + 1, bound * 100 - 1);
  const std::uint64_t magnitude = cents < 0 ? static_cast<std::uint64_t>(-cents) : static_cast<std::uint64_t>(cents);
  return fmt::format("{}{}.{:02}", cents < 0 ? "-" : "", magnitude / 100, magnitude % 100);
}

// 'YYYY-MM-DD hh:mm:ss.ffffff' with days 1..28, so every value exists in every calendar and,
// with the session in UTC, in every TIMESTAMP.
std::string datetime(Prng& random, int first_year, int last_year) {
  return fmt::format("'{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}'", random.between(first_year, last_year),
                     random.between(1, 12), random.between(1, 28), random.between(0, 23), random.between(0, 59),
                     random.between(0, 59), random.between(0, 999'999));
}

std::string nullable(Prng& random, double null_share, const std::string& value) {
  return random.chance(null_share) ? "NULL" : value;
}

std::string bytes(Prng& random, std::uint64_t max_length) {
  const std::uint64_t length = random.below(max_length + 1);
  std::string out = "x'";
  for (std::uint64_t i = 0; i < length; ++i) out += fmt::format("{:02x}", random.below(256));
  return out + "'";
}

std::string id_list(const std::vector<std::int64_t>& ids) { return fmt::format("{}", fmt::join(ids, ", ")); }

}  // namespace

EventCounts& EventCounts::operator+=(const EventCounts& other) {
  inserts += other.inserts;
  updates += other.updates;
  deletes += other.deletes;
  return *this;
}

std::vector<std::string> create_tables_sql(const std::string& prefix) {
  return {
      fmt::format("DROP TABLE IF EXISTS {0}_accounts, {0}_orders", prefix),
      fmt::format("CREATE TABLE {}_accounts (id BIGINT PRIMARY KEY, owner VARCHAR(64) NOT NULL, balance DECIMAL(18,2) "
                  "NOT NULL, version INT UNSIGNED NOT NULL, updated DATETIME(6) NOT NULL, status "
                  "ENUM('active','frozen','closed') NOT NULL, note TEXT NULL) DEFAULT CHARSET=utf8mb4",
                  prefix),
      fmt::format("CREATE TABLE {}_orders (id BIGINT PRIMARY KEY, account_id BIGINT NOT NULL, amount DECIMAL(12,2) NOT "
                  "NULL, quantity INT NOT NULL, placed TIMESTAMP(6) NULL, score DOUBLE NULL, payload VARBINARY(32) "
                  "NULL, version INT UNSIGNED NOT NULL) DEFAULT CHARSET=utf8mb4",
                  prefix),
  };
}

Generator::Generator(WorkloadOptions options, std::vector<TableKeys> keys)
    : options_(std::move(options)), keys_(std::move(keys)), random_(options_.seed) {
  if (keys_.size() != kTableCount) fail("workload: expected keys of {} tables, got {}", kTableCount, keys_.size());
  if (options_.mix.insert + options_.mix.update + options_.mix.remove == 0) {
    throw ConfigError("workload: the insert:update:delete mix is all zero");
  }
  if (options_.max_statements == 0) throw ConfigError("workload: statements per transaction must be positive");
  if (options_.rows_per_statement == 0) throw ConfigError("workload: rows per statement must be positive");
}

std::string Generator::table_name(std::size_t table) const { return options_.prefix + kTableSuffixes[table]; }

std::string Generator::row_values(std::size_t table, std::int64_t id) {
  if (table == kAccounts) {
    constexpr const char* kStatus[] = {"'active'", "'frozen'", "'closed'"};
    return fmt::format("({}, {}, {}, 1, {}, {}, {})", id, text(random_, 4), decimal(random_, 16),
                       datetime(random_, 2000, 2030), kStatus[random_.below(3)],
                       nullable(random_, 0.3, text(random_, 12)));
  }
  const TableKeys& accounts = keys_[kAccounts];
  const std::int64_t account = accounts.live.empty() ? 0 : accounts.live[random_.below(accounts.live.size())];
  return fmt::format("({}, {}, {}, {}, {}, {}, {}, 1)", id, account, decimal(random_, 10),
                     random_.between(-1000, 1'000'000), nullable(random_, 0.1, datetime(random_, 1971, 2037)),
                     nullable(random_, 0.1, fmt::format("{}e-3", random_.between(-1'000'000'000, 1'000'000'000))),
                     nullable(random_, 0.2, bytes(random_, 32)));
}

std::string Generator::set_clause(std::size_t table) {
  if (table == kAccounts) {
    return fmt::format("balance = {}, updated = {}, note = {}, version = version + 1", decimal(random_, 16),
                       datetime(random_, 2000, 2030), nullable(random_, 0.3, text(random_, 12)));
  }
  return fmt::format("amount = {}, quantity = {}, payload = {}, version = version + 1", decimal(random_, 10),
                     random_.between(-1000, 1'000'000), nullable(random_, 0.2, bytes(random_, 32)));
}

std::string Generator::insert(std::size_t table, std::uint64_t rows, EventCounts& events) {
  static constexpr const char* kColumns[] = {
      "id, owner, balance, version, updated, status, note",
      "id, account_id, amount, quantity, placed, score, payload, version",
  };
  TableKeys& keys = keys_[table];
  std::string sql = fmt::format("INSERT INTO {} ({}) VALUES ", table_name(table), kColumns[table]);
  for (std::uint64_t i = 0; i < rows; ++i) {
    const std::int64_t id = keys.next_id++;
    if (i > 0) sql += ", ";
    sql += row_values(table, id);
    keys.live.push_back(id);
  }
  events.inserts += rows;
  return sql;
}

// Distinct indexes into TABLE's live keys; each from the hot set with probability hot_share.
std::vector<std::size_t> Generator::pick_keys(std::size_t table, std::size_t count) {
  const std::size_t live = keys_[table].live.size();
  count = std::min(count, live);
  const std::size_t hot = std::min(options_.hot_keys, live);
  std::vector<std::size_t> picked;
  std::unordered_set<std::size_t> seen;
  for (std::size_t attempt = 0; picked.size() < count && attempt < 4 * count + 16; ++attempt) {
    const bool from_hot = hot > 0 && random_.chance(options_.hot_share);
    const std::size_t index = random_.below(from_hot ? hot : live);
    if (seen.insert(index).second) picked.push_back(index);
  }
  return picked;
}

std::string Generator::update(std::size_t table, EventCounts& events) {
  TableKeys& keys = keys_[table];
  if (random_.chance(options_.key_change_share)) {
    const std::size_t index = pick_keys(table, 1).front();
    const std::int64_t old_id = keys.live[index];
    keys.live[index] = keys.next_id++;
    events.updates += 1;
    return fmt::format("UPDATE {} SET id = {}, version = version + 1 WHERE id = {}", table_name(table),
                       keys.live[index], old_id);
  }
  std::vector<std::int64_t> ids;
  for (std::size_t index : pick_keys(table, options_.rows_per_statement)) ids.push_back(keys.live[index]);
  events.updates += ids.size();
  return fmt::format("UPDATE {} SET {} WHERE id IN ({})", table_name(table), set_clause(table), id_list(ids));
}

std::string Generator::remove(std::size_t table, EventCounts& events) {
  TableKeys& keys = keys_[table];
  std::vector<std::size_t> indexes = pick_keys(table, options_.rows_per_statement);
  std::vector<std::int64_t> ids;
  for (std::size_t index : indexes) ids.push_back(keys.live[index]);
  // Swap-remove from the highest index down, so every index still names the key it picked.
  std::sort(indexes.rbegin(), indexes.rend());
  for (std::size_t index : indexes) {
    keys.live[index] = keys.live.back();
    keys.live.pop_back();
  }
  events.deletes += ids.size();
  return fmt::format("DELETE FROM {} WHERE id IN ({})", table_name(table), id_list(ids));
}

Transaction Generator::bulk_insert(std::size_t table, std::uint64_t rows) {
  Transaction txn;
  txn.number = ++generated_;
  for (std::uint64_t done = 0; done < rows;) {
    const std::uint64_t chunk = std::min(kBulkRowsPerStatement, rows - done);
    txn.statements.push_back(insert(table, chunk, txn.events));
    done += chunk;
  }
  return txn;
}

// The schema changes binberg evolves tables for, in cycles of three on one table (the tables take
// turns): a nullable column (existing rows: NULL), a NOT NULL column with a DEFAULT (existing rows
// get it), then widening the first from INT to BIGINT. Names carry the seed, and IF [NOT] EXISTS
// makes a repeated run a no-op rather than an error.
Transaction Generator::ddl_step() {
  Transaction txn;
  txn.number = ++generated_;
  txn.schema_change = true;
  const std::uint64_t step = schema_changes_++;
  const std::uint64_t cycle = step / 3;
  const std::string table = table_name(cycle % kTableCount);
  const std::string column = fmt::format("ddl_{}_{}", options_.seed, cycle);
  switch (step % 3) {
    case 0:
      txn.statements.push_back(fmt::format("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {}_n INT NULL", table, column));
      break;
    case 1:
      txn.statements.push_back(fmt::format(
          "ALTER TABLE {} ADD COLUMN IF NOT EXISTS {}_d VARCHAR(24) NOT NULL DEFAULT 'c{}'", table, column, cycle));
      break;
    default:
      txn.statements.push_back(fmt::format("ALTER TABLE {} MODIFY COLUMN IF EXISTS {}_n BIGINT NULL", table, column));
      break;
  }
  return txn;
}

Transaction Generator::next() {
  if (options_.large_every != 0 && (generated_ + 1) % options_.large_every == 0) {
    return bulk_insert(random_.below(kTableCount), options_.large_rows);
  }
  if (options_.ddl_every != 0 && (generated_ + 1) % options_.ddl_every == 0) return ddl_step();
  Transaction txn;
  txn.number = ++generated_;
  const bool multi_table = random_.chance(options_.multi_table_share);
  const std::size_t single_table = random_.below(kTableCount);
  const Mix& mix = options_.mix;
  for (std::uint64_t s = random_.between(1, options_.max_statements); s > 0; --s) {
    const std::size_t table = multi_table ? random_.below(kTableCount) : single_table;
    const std::uint64_t draw = random_.below(mix.insert + mix.update + mix.remove);
    if (draw < mix.insert || keys_[table].live.empty()) {  // nothing to update or delete yet: insert
      txn.statements.push_back(insert(table, options_.rows_per_statement, txn.events));
    } else if (draw < mix.insert + mix.update) {
      txn.statements.push_back(update(table, txn.events));
    } else {
      txn.statements.push_back(remove(table, txn.events));
    }
  }
  return txn;
}

}  // namespace binberg::lab
