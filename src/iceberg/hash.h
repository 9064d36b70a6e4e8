#pragma once

// The 32-bit hash behind the bucket[N] transform (spec Appendix B).

#include <cstdint>
#include <span>

#include "iceberg/detail/literal.h"
#include "iceberg/detail/types.h"

namespace binberg::iceberg {

// 32-bit Murmur3, x86 variant.
std::uint32_t murmur3_x86_32(std::span<const std::uint8_t> data, std::uint32_t seed = 0);

// The spec's hash of a non-null VALUE of TYPE, one of the types bucket[N] accepts: int, long,
// decimal, date, time, timestamp, timestamptz, string, uuid, fixed, binary. Ints and dates hash as
// longs, so promoting int to long keeps bucket values.
std::int32_t bucket_hash(const Type& type, const Literal& value);

}  // namespace binberg::iceberg
