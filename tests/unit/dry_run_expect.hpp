#pragma once
// Measured accounting against the dry run's plan (test_dry_run_cutoff, test_dry_run_nccl).
#include <gtest/gtest.h>

#include <string>

#include "beatnik/comm/comm_stats.hpp"

namespace beatnik::test {

// m_times × the measured pattern equals p_times × the planned one: calls, and bytes and messages
// of every locality.
inline void expect_same_pattern(const comm::PatternStats& m, long m_times, const comm::PatternStats& p, long p_times,
                                const std::string& what) {
  EXPECT_EQ(m.calls * m_times, p.calls * p_times) << what;
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(m.bytes[l] * m_times, p.bytes[l] * p_times) << what << " locality " << l;
    EXPECT_EQ(m.messages[l] * m_times, p.messages[l] * p_times) << what << " locality " << l;
  }
}

// Every measured pattern over `steps` steps equals the per-step plan times `steps`, and nothing
// else is planned.
inline void expect_planned_steps(const comm::CommStats& measured, const comm::CommStats& planned, long steps,
                                 const std::string& what) {
  EXPECT_FALSE(measured.stats().empty()) << what;
  EXPECT_EQ(measured.stats().size(), planned.stats().size()) << what;
  for (const auto& [name, m] : measured.stats()) {
    auto it = planned.stats().find(name);
    if (it == planned.stats().end()) {
      ADD_FAILURE() << what << ": " << name << " not planned";
      continue;
    }
    expect_same_pattern(m, 1, it->second, steps, what + " " + name);
  }
}

}  // namespace beatnik::test
