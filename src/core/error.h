#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace binberg {

// Every failure binberg reports carries a message that names what failed and where
// (service address, table, position, config key), so a user can act on it without a debugger.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad configuration or arguments: the user must change something before retrying.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A service could not be reached or the connection dropped: retrying later may succeed.
class ConnectionError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// Reads a whole file; throws Error naming the path when it cannot.
std::string read_file(const std::string& path);

}  // namespace binberg
