#pragma once

// `binberg services`: the local service stack (scripts/services). The script is compiled into the
// binary, so binberg runs it without the source tree; the broker and registry it starts come
// from where scripts/setup installed them ($BINBERG_DEPS_DIR, by default the dir setup used when
// this binary was built).

#include <string>

namespace binberg::lab {

struct ServicesRequest {
  std::string action;  // up, down, status
  std::string dir;     // empty: default_dir()
  unsigned port_offset = 0;
  std::string only;  // comma-separated subset of mariadb,postgres,kafka,registry; empty: all
};

// The text of scripts/services as it was when this binary was built.
const char* services_script();

// Replaces this process with bash running the script for REQUEST; returns only by throwing Error.
[[noreturn]] void exec_services_script(const ServicesRequest& request);

}  // namespace binberg::lab
