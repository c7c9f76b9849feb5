#pragma once
// Every ring-pass strategy by name: the one list that --help, option validation, the banner,
// the results file and the tests read. Adding a strategy is one file beside blocking.cpp and
// one line in registry.cpp.
#include <memory>
#include <string>
#include <vector>

#include "beatnik/comm/ring/ring_strategy.hpp"
#include "beatnik/comm/transport.hpp"

namespace beatnik::comm::ring {

struct StrategyEntry {
  const char* name;
  const char* description;  // one line: how a round's block moves
  // Empty when this strategy can move blocks over `transport` with this MPI library, else why not.
  std::string (*unavailable)(TransportKind transport);
  std::unique_ptr<Strategy> (*make)(const Setup&);  // collective over setup.comm
};

// All strategies, in the order --help lists them.
const std::vector<StrategyEntry>& registry();
// The entry called `name`: InputError listing every name when there is none.
const StrategyEntry& find_strategy(const std::string& name);
// The same, and NotAvailable (with the reason) when it cannot run over `transport`.
const StrategyEntry& find_strategy(const std::string& name, TransportKind transport);
// "blocking, overlap, persistent or rma" (for messages).
std::string strategy_names();
// One "  name  description" line per strategy (for --help).
std::string strategy_help();

}  // namespace beatnik::comm::ring
