#pragma once

// Assertions for programmer errors: a broken invariant stops the process, it is never thrown and
// retried. Operating errors (a lost connection, a commit conflict, bad input) stay exceptions
// (core/error.h) and are retried or reported; a state the code promises cannot happen is not one.
//
//   BINBERG_ASSERT(condition, "format", args...)   always on: invariants where state changes
//   BINBERG_DASSERT(condition, "format", args...)  builds without NDEBUG only: expensive checks
//   BINBERG_UNREACHABLE("format", args...)
//
// A failure logs the file, line, condition and the formatted values, then aborts. Assert in
// pairs where state moves (before: the precondition; after: what the change promises), as
// TigerBeetle does, so a bug is caught where it happens, not where its damage shows.

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace binberg::detail {

[[noreturn]] void assertion_failed(const char* file, int line, std::string_view condition, const std::string& message);

}  // namespace binberg::detail

namespace binberg {

// A line printed with every assertion failure of this process, until replaced: how to reproduce
// what was running (a simulation prints the command that replays its seed). Empty: none.
void set_assertion_note(std::string note);

}  // namespace binberg

#define BINBERG_ASSERT(condition, ...)                                                                 \
  do {                                                                                                 \
    if (!(condition)) [[unlikely]]                                                                     \
      ::binberg::detail::assertion_failed(__FILE__, __LINE__, #condition, ::fmt::format(__VA_ARGS__)); \
  } while (false)

#ifdef NDEBUG
#define BINBERG_DASSERT(condition, ...) \
  do {                                  \
    if (false && (condition)) {         \
    }                                   \
  } while (false)
#else
#define BINBERG_DASSERT(condition, ...) BINBERG_ASSERT(condition, __VA_ARGS__)
#endif

#define BINBERG_UNREACHABLE(...) \
  ::binberg::detail::assertion_failed(__FILE__, __LINE__, "unreachable", ::fmt::format(__VA_ARGS__))
