#pragma once
// `beatnik --bounds FILE` (docs/commbench.md): beside every communication pattern of the run,
// its achieved GB/s (bytes of the pattern / time of its timer regions) and the "% of
// achievable" against the bound beatnik-commbench measured for the same message set. Also the
// test hook BEATNIK_TEST_SLOW_PATTERN that slows one pattern down on purpose.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "beatnik/app/problem.hpp"

namespace beatnik::app {

// What is wrong with a bounds file ("" when it reads as one): missing, not JSON, not a
// beatnik-bounds document. Called on one rank before the run.
std::string bounds_file_problem(const std::string& path);

// Adds to every pattern of doc["communication"]: achieved_gb_per_s and, from the bounds file,
// achievable_gb_per_s and percent_of_achievable, or bounds_status saying why there is none;
// doc["bounds"] names the file. `ranks`: the run's rank count (its message sets are planned
// for the comparison).
void add_bounds(nlohmann::json& doc, const RunConfig& c, int ranks, const std::string& file);

// The summary table's extra columns for one pattern's entry (empty without --bounds) and their
// header.
std::string bounds_header(const nlohmann::json& doc);
std::string bounds_columns(const nlohmann::json& entry);

// BEATNIK_TEST_SLOW_PATTERN=PATTERN:MICROSECONDS (halo, fft or ring): the timer region that starts
// each of the pattern's exchanges (halo.NAME.post, fft.reshape, br.exact.ring) sleeps that long
// when it opens, before the messages leave, so the pattern is slower and the others are not.
// Null when the variable is unset; InputError on a bad value. For tests only.
std::function<double(const std::string&)> test_slowdown_from_environment();

}  // namespace beatnik::app
