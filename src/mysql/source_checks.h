#pragma once

// Checks that a source server is set up for exact CDC before binberg reads from it, so a bad
// setting is reported once, up front, with the fix, instead of surfacing as wrong data later.

#include <string>
#include <vector>

#include "mysql/binlog_stream.h"
#include "mysql/connection.h"

namespace binberg::mysql {

struct SourceProblem {
  std::string setting;
  std::string actual;
  std::string fix;
};

// Every problem found: binlog off or not ROW/FULL/FULL, compressed binlog, missing privileges.
std::vector<SourceProblem> find_source_problems(Connection& connection);

// Throws ConfigError listing every problem (setting, actual value, fix) when there is any.
void require_cdc_ready(Connection& connection);

// Throws PositionUnavailable when POSITION's file is gone (purged) or past its end.
void require_position_available(Connection& connection, const BinlogPosition& position);

}  // namespace binberg::mysql
