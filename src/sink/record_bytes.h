#pragma once

// Where a record's bytes enter the sink: its value and key (RecordDecoder) and its headers
// (RecordFacts::of). Whatever those bytes are, reading them ends in the record's verdict — its
// change, or why it goes to the dead-letter topic — never in an exception that ends the session,
// which would meet the same record again at the next one, forever. So every parser a record's
// bytes reach runs inside reading(): what it throws comes out as a binberg::Error naming the part
// of the record it read.

#include <fmt/format.h>

#include <concepts>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/error.h"

namespace binberg::sink {

// A record's bytes are not what binberg source writes (they came from another producer, or were
// damaged): the record goes to the dead-letter topic.
class MalformedRecord : public Error {
 public:
  using Error::Error;
};

// Runs BODY, which parses WHAT of a record ("value", "key", "header binberg.txn_end"; a string, or
// a callable making one: called only on failure). An Error BODY throws keeps its type (a registry
// outage stays a RegistryError, retried; a bad record's Error is judged) and gains WHAT as context;
// any other exception (a JSON type error, an out_of_range from a number, ...) becomes
// MalformedRecord naming WHAT. std::bad_alloc passes untouched: running out of memory is no verdict
// on the record.
template <typename What, std::invocable Body>
decltype(auto) reading(What&& what, Body&& body) {
  const auto describe = [&] {
    if constexpr (std::is_invocable_v<What&>) {
      return std::string(std::invoke(what));
    } else {
      return std::string(what);
    }
  };
  try {
    return std::invoke(std::forward<Body>(body));
  } catch (Error& error) {
    error.add_context(describe());
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& error) {
    throw MalformedRecord(fmt::format("{}: {}", describe(), error.what()));
  }
}

}  // namespace binberg::sink
