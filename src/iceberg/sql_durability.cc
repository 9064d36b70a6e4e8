#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "iceberg/sql_connection.h"

namespace binberg::iceberg {
namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

std::vector<std::string> sqlite_durability_problems(const std::string& journal_mode, const std::string& synchronous) {
  std::vector<std::string> problems;
  const std::string mode = lowercase(journal_mode);
  if (mode != "delete" && mode != "truncate" && mode != "persist" && mode != "wal") {
    problems.push_back(
        fmt::format("journal_mode is {}: a crash during a commit can leave the database corrupt (use DELETE or WAL)",
                    journal_mode));
  }
  // PRAGMA synchronous reads back as 0 (OFF), 1 (NORMAL), 2 (FULL) or 3 (EXTRA).
  const int needed = mode == "wal" ? 2 : 3;
  if (synchronous.size() != 1 || synchronous[0] < '0' + needed || synchronous[0] > '3') {
    problems.push_back(
        fmt::format("synchronous is {} (journal mode {} needs {}): a commit may not survive a power loss", synchronous,
                    journal_mode, needed == 2 ? "2, FULL" : "3, EXTRA, which also syncs the journal's removal"));
  }
  return problems;
}

std::vector<std::string> postgres_durability_problems(const std::map<std::string, std::string>& settings) {
  const auto setting = [&](const std::string& name) {
    const auto it = settings.find(name);
    return it == settings.end() ? std::string("(not reported)") : it->second;
  };
  std::vector<std::string> problems;
  if (setting("fsync") != "on") {
    problems.push_back(fmt::format(
        "the server runs with fsync = {}: a crash of its machine can lose or corrupt committed transactions; set "
        "fsync = on (postgresql.conf, or ALTER SYSTEM SET fsync = on) and reload the server (SELECT pg_reload_conf())",
        setting("fsync")));
  }
  if (setting("full_page_writes") != "on") {
    problems.push_back(fmt::format(
        "the server runs with full_page_writes = {}: a crash can leave torn pages that recovery cannot repair; set "
        "full_page_writes = on (postgresql.conf, or ALTER SYSTEM SET full_page_writes = on) and reload the server",
        setting("full_page_writes")));
  }
  if (setting("synchronous_commit") == "off" || !settings.contains("synchronous_commit")) {
    problems.push_back(fmt::format(
        "synchronous_commit is {}: the server acknowledges a commit before it is flushed; the session could not set it "
        "on",
        setting("synchronous_commit")));
  }
  return problems;
}

void require_durable(const std::string& description, const std::vector<std::string>& problems,
                     CatalogDurability durability) {
  if (problems.empty()) return;
  const std::string message =
      fmt::format("catalog {} would not keep its commits durable: {}", description, fmt::join(problems, "; "));
  if (durability == CatalogDurability::kNotRequired) {
    spdlog::warn("{} (allowed by [iceberg] allow_non_durable_catalog)", message);
    return;
  }
  throw ConfigError(fmt::format(
      "{}. Fix the database, or set [iceberg] allow_non_durable_catalog = true to accept that a crash may lose "
      "commits (tests, throwaway data)",
      message));
}

}  // namespace binberg::iceberg
