#include "mysql/source_checks.h"

#include <algorithm>

#include "core/error.h"

namespace binberg::mysql {
namespace {

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

}  // namespace

std::vector<SourceProblem> find_source_problems(Connection& connection) {
  std::vector<SourceProblem> problems;
  auto variable = [&](const std::string& name) {
    return upper(connection.scalar("SELECT @@global." + name).value_or(""));
  };
  if (variable("log_bin") != "1") {
    problems.push_back({"log_bin", "OFF", "start the server with log_bin (and a server_id)"});
  }
  struct Required {
    const char* name;
    const char* value;
  };
  for (const Required& required : {Required{"binlog_format", "ROW"}, Required{"binlog_row_image", "FULL"},
                                   Required{"binlog_row_metadata", "FULL"}}) {
    const std::string actual = variable(required.name);
    if (actual != required.value) {
      problems.push_back(
          {required.name, actual,
           fmt::format("SET GLOBAL {0}={1} and add {0}={1} to the server config", required.name, required.value)});
    }
  }
  const auto compress = connection.query("SHOW GLOBAL VARIABLES LIKE 'log_bin_compress'");
  if (!compress.rows.empty() && upper(compress.rows[0][1].value_or("")) == "ON") {
    problems.push_back({"log_bin_compress", "ON", "SET GLOBAL log_bin_compress=OFF (compressed events are refused)"});
  }
  std::string grants;
  for (const auto& row : connection.query("SHOW GRANTS FOR CURRENT_USER()").rows)
    grants += upper(row[0].value_or("")) + "\n";
  const bool all = grants.find("GRANT ALL PRIVILEGES ON *.*") != std::string::npos;
  if (!all && grants.find("REPLICATION SLAVE") == std::string::npos) {
    problems.push_back({"privilege REPLICATION SLAVE", "missing", "GRANT REPLICATION SLAVE ON *.* TO <user>"});
  }
  if (!all && grants.find("BINLOG MONITOR") == std::string::npos &&
      grants.find("REPLICATION CLIENT") == std::string::npos && grants.find("SUPER") == std::string::npos) {
    problems.push_back({"privilege BINLOG MONITOR", "missing", "GRANT BINLOG MONITOR ON *.* TO <user>"});
  }
  return problems;
}

void require_cdc_ready(Connection& connection) {
  const auto problems = find_source_problems(connection);
  if (problems.empty()) return;
  std::string message = fmt::format("source {} is not set up for CDC:", connection.options().address());
  for (const auto& problem : problems) {
    message += fmt::format("\n  {} is {}: {}", problem.setting, problem.actual, problem.fix);
  }
  throw ConfigError(message);
}

void require_position_available(Connection& connection, const BinlogPosition& position) {
  const auto logs = connection.query("SHOW BINARY LOGS");
  for (const auto& row : logs.rows) {
    if (row[0] != position.file) continue;
    const auto size = std::stoull(row[1].value_or("0"));
    if (position.offset > size) {
      throw PositionUnavailable(fmt::format("source {}: position {} is past the end of {} ({} bytes)",
                                            connection.options().address(), position.to_string(), position.file, size));
    }
    return;
  }
  throw PositionUnavailable(fmt::format(
      "source {}: binlog file {} is not on the server (purged, or from another server); the oldest is {}. "
      "The table cannot be resumed from there: take a fresh snapshot",
      connection.options().address(), position.file, logs.rows.empty() ? "none" : logs.rows[0][0].value_or("?")));
}

}  // namespace binberg::mysql
