#pragma once
// Every halo-exchange strategy by name: the one list that --help, option validation, the
// banner, the results file and the tests read. Adding a strategy is one file beside isend.cpp
// and one line in registry.cpp.
#include <memory>
#include <string>
#include <vector>

#include "beatnik/comm/halo/halo_strategy.hpp"
#include "beatnik/comm/transport.hpp"

namespace beatnik::comm::halo {

inline constexpr const char* kDefaultStrategy = "isend";

struct StrategyEntry {
  const char* name;
  const char* description;  // one line: how it talks
  // Empty when this MPI library can run it over buffers the transport `kind` hands to MPI,
  // else why not.
  std::string (*unavailable)(TransportKind kind);
  std::unique_ptr<Strategy> (*make)(const Setup&);  // collective over setup.comm
  // Moves device memory itself (no MPI data path, no staging): Setup holds the device buffers.
  bool device_direct = false;
};

// All strategies, in the order --help lists them.
const std::vector<StrategyEntry>& registry();
// The entry called `name`: InputError listing every name when there is none, NotAvailable
// (with the reason) when it cannot run over `kind` here.
const StrategyEntry& find_strategy(const std::string& name, TransportKind kind = TransportKind::Host);
// "isend, persistent, ... or rma-lock" (for messages).
std::string strategy_names();
// One "  name  description" line per strategy (for --help).
std::string strategy_help();

}  // namespace beatnik::comm::halo
