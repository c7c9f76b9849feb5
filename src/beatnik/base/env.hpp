#pragma once
// The environment's knobs (BEATNIK_*: A/B switches and tuning for measurements, listed in
// docs/tree.md "Environment knobs"), checked: a value a knob does not take is an InputError that
// names the variable and what it takes, never a silent fallback to the default.
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace beatnik::env {

// Unset or empty: nullopt. Else the whole value as a base-10 integer in [lo, hi].
std::optional<long> integer(const char* name, long lo, long hi);

// Unset or empty: nullopt. Else the value, which must be one of `choices`.
std::optional<std::string> choice(const char* name, std::initializer_list<std::string_view> choices);

}  // namespace beatnik::env
