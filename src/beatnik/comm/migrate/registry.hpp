#pragma once
// Every migration strategy by name: the one list that --help, option validation, the banner,
// the results file and the tests read. Adding a strategy is one file beside alltoallv.cpp and
// one line in registry.cpp.
#include <memory>
#include <string>
#include <vector>

#include "beatnik/comm/migrate/migrate_strategy.hpp"

namespace beatnik::comm::migrate {

struct StrategyEntry {
  const char* name;
  const char* description;       // one line: how it talks
  std::string (*unavailable)();  // empty when this build and MPI library can run it, else why not
  std::unique_ptr<Strategy> (*make)(const Setup&);  // collective over setup.comm
};

// All strategies, in the order --help lists them.
const std::vector<StrategyEntry>& registry();
// The entry called `name`: InputError listing every name when there is none, NotAvailable
// (with the reason) when it cannot run here.
const StrategyEntry& find_strategy(const std::string& name);
// "alltoallv, sparse or neighbor" (for messages).
std::string strategy_names();
// One "  name  description" line per strategy (for --help).
std::string strategy_help();

}  // namespace beatnik::comm::migrate
