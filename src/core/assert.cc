#include "core/assert.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace binberg {
namespace {

std::mutex note_mutex;
std::string& note() {
  static std::string text;
  return text;
}

}  // namespace

void set_assertion_note(std::string text) {
  const std::lock_guard lock(note_mutex);
  note() = std::move(text);
}

namespace detail {

void assertion_failed(const char* file, int line, std::string_view condition, const std::string& message) {
  std::string text = fmt::format("assertion failed at {}:{}: {}: {}", file, line, condition, message);
  {
    const std::lock_guard lock(note_mutex);
    if (!note().empty()) text += "\n" + note();
  }
  if (auto logger = spdlog::default_logger()) logger->flush();  // what came before, first
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace detail
}  // namespace binberg
