#include "lab/service_stack.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "lab/endpoints.h"
#include "lab/services_script.h"

namespace binberg::lab {

const char* services_script() { return kServicesScript; }

void exec_services_script(const ServicesRequest& request) {
  const char* deps = std::getenv("BINBERG_DEPS_DIR");
  ::setenv("BINBERG_DEPS_DIR", deps != nullptr && *deps != '\0' ? deps : kDefaultDepsDir, 1);
  const std::string dir = default_dir();
  ::setenv("BINBERG_DEFAULT_SERVICES_DIR", dir.c_str(), 1);
  // bash -c SCRIPT NAME ARGS...: NAME becomes $0, ARGS the script's arguments.
  std::vector<std::string> argv = {"bash", "-c", services_script(), "binberg-services", request.action};
  if (!request.dir.empty()) argv.insert(argv.end(), {"--dir", request.dir});
  argv.insert(argv.end(), {"--port-offset", std::to_string(request.port_offset)});
  if (!request.only.empty()) argv.insert(argv.end(), {"--only", request.only});
  std::vector<char*> raw;
  for (auto& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  ::execvp("bash", raw.data());
  fail("services: cannot run bash: {}", std::strerror(errno));
}

}  // namespace binberg::lab
