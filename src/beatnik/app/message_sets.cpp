#include "beatnik/app/message_sets.hpp"

#include <fmt/format.h>

#include <set>

#include "beatnik/app/dry_run_plan.hpp"
#include "beatnik/base/error.hpp"

namespace beatnik::app {

long PatternMessages::bytes_per_step() const {
  long b = 0;
  for (const auto& rank : sends)
    for (const auto& ex : rank)
      for (const auto& m : ex) b += m.second;
  return b;
}

long PatternMessages::messages_per_step() const {
  long n = 0;
  for (const auto& rank : sends)
    for (const auto& ex : rank) n += static_cast<long>(ex.size());
  return n;
}

std::vector<std::vector<int>> PatternMessages::peers() const {
  std::vector<std::vector<int>> out(sends.size());
  for (size_t r = 0; r < sends.size(); ++r) {
    std::set<int> s;
    for (const auto& ex : sends[r])
      for (const auto& m : ex)
        if (m.first != static_cast<int>(r)) s.insert(m.first);
    out[r].assign(s.begin(), s.end());
  }
  return out;
}

std::map<long, long> PatternMessages::sizes() const {
  std::map<long, long> out;
  for (const auto& rank : sends)
    for (const auto& ex : rank)
      for (const auto& m : ex) out[m.second] += 1;
  return out;
}

std::string PatternMessages::fingerprint() const {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&](long v) {
    for (int k = 0; k < 8; ++k) {
      h ^= static_cast<std::uint64_t>(v >> (8 * k)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  mix(ranks());
  mix(rounds ? 1 : 0);
  for (const auto& rank : sends) {
    mix(static_cast<long>(rank.size()));
    for (const auto& ex : rank) {
      mix(static_cast<long>(ex.size()));
      for (const auto& [peer, bytes] : ex) {
        mix(peer);
        mix(bytes);
      }
    }
  }
  return fmt::format("{:016x}", h);
}

MessageSets plan_message_sets(const RunConfig& c, int ranks) {
  PlanOptions opt;
  opt.exchanges = true;
  opt.skip_unplanned = true;
  DryRunPlan plan = plan_dry_run(c, ranks, 0, opt);
  MessageSets out;
  out.unplanned = plan.unplanned;
  for (auto& [name, per_rank] : plan.exchanges) {
    PatternMessages& p = out.patterns[name];
    p.sends = std::move(per_rank);
    p.rounds = name == "ring";
    // Every rank takes part in every exchange (collectives and paired sends need it).
    for (const auto& r : p.sends)
      if (r.size() != p.sends[0].size())
        throw Error(fmt::format("message sets: pattern {} has different exchange counts on different ranks", name));
  }
  return out;
}

}  // namespace beatnik::app
