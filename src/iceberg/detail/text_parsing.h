#pragma once

// Small parsers for the parameterized strings of the spec: "decimal(10,2)", "fixed[16]",
// "bucket[16]", "00003-<uuid>.metadata.json". (std::regex trips GCC 12 warnings under sanitizers.)

#include <cstdint>
#include <optional>
#include <string_view>

namespace binberg::iceberg {

// The text between OPEN and CLOSE when TEXT is exactly OPEN + inner + CLOSE.
std::optional<std::string_view> enclosed(std::string_view text, std::string_view open, char close);

// A decimal integer, optionally signed, surrounded by optional spaces; nullopt if TEXT is anything
// else or out of the int64 range.
std::optional<std::int64_t> parse_integer(std::string_view text);

}  // namespace binberg::iceberg
