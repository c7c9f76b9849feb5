#pragma once
// Test hook (BEATNIK_TEST_SLOW_PATTERN, app/bounds_report.hpp): when set, every timer region
// sleeps region_delay_hook(name) seconds right after it opens (host clock), so that a test can make
// one communication pattern slower on purpose. Null (the default): off. Set once, before the
// first step; process-wide.
#include <functional>
#include <string>

namespace beatnik {

extern std::function<double(const std::string&)> region_delay_hook;

}  // namespace beatnik
