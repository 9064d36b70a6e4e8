#pragma once

// What a run ran on, detected when it runs: binberg's version and commit, the versions the running
// services report, the libraries binberg is linked with, the host, and the command line. Never a
// credential: the command line is recorded as given, and binberg takes no secret on it.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lab/endpoints.h"

namespace binberg::drill {

nlohmann::json detect_provenance(const lab::Endpoints& stack, const std::vector<std::string>& command_line);

}  // namespace binberg::drill
