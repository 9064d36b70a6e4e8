#pragma once

// Secrets (passwords) come from an environment variable or from a file only its owner can read;
// never from a command line or a configuration file, and never into logs.

#include <string>

namespace binberg {

// The value of environment variable NAME; throws ConfigError naming it when unset.
std::string secret_from_env(const std::string& name);
// The first line of PATH; throws ConfigError when it cannot be read or is readable by others.
std::string secret_from_file(const std::string& path);

}  // namespace binberg
