#pragma once

// The workload generator's pseudo-random numbers: xoshiro256** 1.0 (Blackman and Vigna) seeded
// by expanding the 64-bit seed with SplitMix64, exactly as the reference implementations do, so
// a seed gives the same sequence on every platform and in any language (docs/workload.md).

#include <array>
#include <cstdint>

namespace binberg::lab {

class Prng {
 public:
  explicit Prng(std::uint64_t seed);

  std::uint64_t next();
  // Uniform in [0, bound) without modulo bias (Lemire's multiply-and-reject); bound > 0.
  std::uint64_t below(std::uint64_t bound);
  // Uniform in [low, high].
  std::int64_t between(std::int64_t low, std::int64_t high);
  // True with probability P: the top 53 bits as a double in [0, 1) compared with P.
  bool chance(double p);

 private:
  std::array<std::uint64_t, 4> state_{};
};

}  // namespace binberg::lab
