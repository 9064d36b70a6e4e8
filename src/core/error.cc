#include "core/error.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace binberg {

Error::Error(std::string message) : std::runtime_error(message), message_(std::move(message)), what_(message_) {}

void Error::add_context(std::string frame) {
  std::string what = fmt::format("{}: {}", frame, what_);
  context_.insert(context_.begin(), std::move(frame));
  what_ = std::move(what);
}

void Error::set_message(std::string message) {
  std::string what = message;
  for (auto frame = context_.rbegin(); frame != context_.rend(); ++frame) what = fmt::format("{}: {}", *frame, what);
  message_ = std::move(message);
  what_ = std::move(what);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read {}: {}", path, std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace binberg
