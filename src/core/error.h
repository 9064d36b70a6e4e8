#pragma once

#include <fmt/format.h>

#include <concepts>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace binberg {

// Every failure binberg reports carries a message that names what failed and where
// (service address, table, position, config key), so a user can act on it without a debugger.
// On its way out an error gathers context frames (with_context below): what() reads
// "outermost: ...: innermost: message", while message() and context() keep the parts apart, so
// no caller has to re-prefix a message or look into what() to see whether it already did.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message);
  explicit Error(const char* message) : Error(std::string(message)) {}

  // The context frames, outermost first, then the message, joined by ": ".
  const char* what() const noexcept override { return what_.c_str(); }
  // The message as thrown, without the frames added since.
  const std::string& message() const noexcept { return message_; }
  // The frames added on the way out, outermost first.
  const std::vector<std::string>& context() const noexcept { return context_; }
  // Adds FRAME as the new outermost frame.
  void add_context(std::string frame);

 protected:
  // For an error whose own message grows on the way out (avro::DecodeError's datum path).
  void set_message(std::string message);

 private:
  std::string message_;
  std::vector<std::string> context_;
  std::string what_;
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

// Runs BODY and returns what it returns. An Error BODY throws goes on with FRAME as its new
// outermost context frame, as the same object: its type is kept (a ConnectionError stays a
// ConnectionError, so the retry decisions above still see it). Other exceptions pass untouched.
// FRAME is a string, or a callable that makes one: it is called only on failure, for frames that
// would cost a format on a hot path.
template <typename Frame, std::invocable Body>
decltype(auto) with_context(Frame&& frame, Body&& body) {
  try {
    return std::invoke(std::forward<Body>(body));
  } catch (Error& error) {
    if constexpr (std::is_invocable_v<Frame&>) {
      error.add_context(std::string(std::invoke(frame)));
    } else {
      error.add_context(std::string(frame));
    }
    throw;
  }
}

// Reads a whole file; throws Error naming the path when it cannot.
std::string read_file(const std::string& path);

}  // namespace binberg
