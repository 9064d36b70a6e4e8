#include "core/secret.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "core/error.h"

namespace binberg {

std::string secret_from_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) throw ConfigError(fmt::format("environment variable {} is not set", name));
  return value;
}

std::string secret_from_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw ConfigError(fmt::format("cannot read {}", path));
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    throw ConfigError(fmt::format("{} is readable by others; chmod 600 it", path));
  }
  std::ifstream in(path);
  std::string value;
  std::getline(in, value);
  return value;
}

}  // namespace binberg
