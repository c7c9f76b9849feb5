#pragma once
// The locally essential tree pulled instead of pushed (--let-strategy rma; docs/tree.md), without
// MPI: what a rank exposes of its tree, and the walk that a receiving rank runs over the records
// it fetches from an owner (comm/let/remote_walk.hpp). The walk makes the owner's decisions
// (LetDecisions::decide, tree_let.hpp) on the same doubles, level by level: each round fetches
// the records of the clusters the last level's visits lead to; a last round fetches the sources
// and proxies the decisions need. The block it ends with is, double for double, the one pack_let
// would have sent, so the velocities are bitwise those of the push strategies.
#include <vector>

#include "beatnik/comm/let/remote_walk.hpp"
#include "beatnik/model/tree_let.hpp"

namespace beatnik::model::tree {

// The exposed sections, in this order.
enum ExposedSection { kRecords = 0, kProxies = 1, kPoints = 2 };
// Doubles per cluster record: lo[3], hi[3], begin, end, child[2], proxy count, proxy offset.
inline constexpr int kRecordWidth = 12;

// The cluster records of this rank's own tree (into `records`) and the sections that expose it
// (records, proxies, points; the tree and `records` must outlive their use).
std::vector<comm::let::Section> expose(const SourceTree& own, std::vector<double>& records);

class LetPull final : public comm::let::RemoteWalk {
 public:
  // targets: this rank's target boxes as every owner has them (the allgathered records); ranks: P.
  LetPull(std::vector<search::Cluster> targets, const Rules& rules, int ranks);
  void start(int owner, const std::vector<long>& sizes, std::vector<comm::let::Span>& want) override;
  void next(int owner, std::vector<double>& got, std::vector<comm::let::Span>& want) override;
  long block_size(int owner) const override;
  void write_block(int owner, double* out) const override;
  // Doubles fetched so far, over every owner; rounds of the deepest walk.
  long fetched() const { return fetched_; }
  int rounds() const { return rounds_; }

 private:
  struct Owner {
    bool active = false, data = false;  // walking; in the data round
    long n = 0;                         // the owner's sources
    std::vector<search::Cluster> clusters;
    std::vector<int> proxy_count;
    std::vector<long> proxy_start;
    std::vector<int> asked;  // clusters whose records were asked for last
    std::vector<Visit> frontier;
    LetDecisions d;
    LetBlockPlan plan;
    std::vector<double> got;  // particles then proxies, as in the block
    int rounds = 0;
  };
  void descend(Owner& o, std::vector<comm::let::Span>& want);
  std::vector<search::Cluster> targets_;
  Rules rules_;
  std::vector<Owner> owners_;
  long fetched_ = 0;
  int rounds_ = 0;
};

}  // namespace beatnik::model::tree
