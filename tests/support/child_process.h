#pragma once

// Tests use the lab's child processes (lab/child_process.h) under their old names.

#include "lab/child_process.h"

namespace binberg::testing {

using lab::ChildProcess;
using lab::count_log_lines;
using lab::log_tail;
using lab::wait_for_log_line;

}  // namespace binberg::testing
