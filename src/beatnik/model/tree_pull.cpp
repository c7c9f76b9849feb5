#include "beatnik/model/tree_pull.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "beatnik/base/error.hpp"

namespace beatnik::model::tree {

using comm::let::Span;

std::vector<comm::let::Section> expose(const SourceTree& t, std::vector<double>& records) {
  const int nc = static_cast<int>(t.clusters.size());
  records.resize(size_t(nc) * kRecordWidth);
  for (int c = 0; c < nc; ++c) {
    const search::Cluster& C = t.clusters[c];
    double* o = &records[size_t(c) * kRecordWidth];
    for (int d = 0; d < 3; ++d) {
      o[d] = C.lo[d];
      o[3 + d] = C.hi[d];
    }
    o[6] = static_cast<double>(C.begin);
    o[7] = static_cast<double>(C.end);
    o[8] = C.child[0];
    o[9] = C.child[1];
    o[10] = t.proxy_count[c];
    o[11] = static_cast<double>(t.proxy_start[c]);
  }
  // An empty tree exposes nothing: no rank walks it (its box says it has no sources).
  if (t.n == 0) return {{records.data(), 0}, {t.proxies.data(), 0}, {t.pts.data(), 0}};
  return {{records.data(), long(records.size())},
          {t.proxies.data(), long(t.proxies.size())},
          {t.pts.data(), 6 * t.n}};
}

LetPull::LetPull(std::vector<search::Cluster> targets, const Rules& rules, int ranks)
    : targets_(std::move(targets)), rules_(rules), owners_(ranks) {}

// As pack_let: nothing from an owner without sources, nothing for a rank without targets.
void LetPull::start(int owner, const std::vector<long>& sizes, std::vector<Span>& want) {
  Owner& o = owners_.at(owner);
  o = Owner{};
  if (sizes.size() != 3)
    throw Error("LET pull: the owner exposes " + std::to_string(sizes.size()) + " sections, not 3");
  if (sizes[kPoints] == 0 || targets_.empty()) return;
  if (sizes[kRecords] % kRecordWidth != 0 || sizes[kPoints] % 6 != 0)
    throw Error("LET pull: rank " + std::to_string(owner) + " exposes sections of the wrong sizes");
  const int nc = static_cast<int>(sizes[kRecords] / kRecordWidth);
  o.active = true;
  o.n = sizes[kPoints] / 6;
  o.clusters.resize(nc);
  o.proxy_count.assign(nc, 0);
  o.proxy_start.assign(nc, -2);  // −2: record not fetched
  o.d.reset(nc);
  o.frontier = root_visits(rules_, static_cast<int>(targets_.size()));
  o.asked = {0};
  want.push_back({kRecords, 0, kRecordWidth});
}

void LetPull::next(int owner, std::vector<double>& fetched, std::vector<Span>& want) {
  Owner& o = owners_.at(owner);
  if (!o.active) throw Error("LET pull: data for a walk that is not under way");
  ++o.rounds;
  rounds_ = std::max(rounds_, o.rounds);
  const double* got = fetched.data();
  if (o.data) {
    if (long(fetched.size()) != 6 * o.plan.particles + o.plan.proxy_doubles)
      throw Error("LET pull: the data round brought the wrong number of doubles");
    fetched_ += long(fetched.size());
    o.got.swap(fetched);  // kept as it came: particles then proxies, the block's tail
    o.active = false;
    return;
  }
  if (fetched.size() != o.asked.size() * kRecordWidth)
    throw Error("LET pull: a round brought the wrong number of doubles");
  const int nc = static_cast<int>(o.clusters.size());
  fetched_ += long(o.asked.size()) * kRecordWidth;
  for (size_t i = 0; i < o.asked.size(); ++i) {
    const double* r = got + i * kRecordWidth;
    search::Cluster& C = o.clusters[o.asked[i]];
    for (int d = 0; d < 3; ++d) {
      C.lo[d] = r[d];
      C.hi[d] = r[3 + d];
    }
    C.begin = static_cast<long>(r[6]);
    C.end = static_cast<long>(r[7]);
    C.child[0] = static_cast<int>(r[8]);
    C.child[1] = static_cast<int>(r[9]);
    o.proxy_count[o.asked[i]] = static_cast<int>(r[10]);
    o.proxy_start[o.asked[i]] = static_cast<long>(r[11]);
    // A torn or misplaced record would silently change the decisions: refuse it.
    const bool children = (C.child[0] < 0 && C.child[1] < 0) ||
                          (C.child[0] > o.asked[i] && C.child[0] < nc && C.child[1] > o.asked[i] && C.child[1] < nc);
    if (!children || C.begin < 0 || C.end > o.n || C.begin >= C.end)
      throw Error("LET pull: an inconsistent cluster record from rank " + std::to_string(owner));
  }
  descend(o, want);
}

// Decides every visit of the frontier (their records are here); asks for the records of the
// clusters the next level visits, or, when no visit is left, for the sources and proxies.
void LetPull::descend(Owner& o, std::vector<Span>& want) {
  std::vector<Visit> next;
  while (!o.frontier.empty()) {
    next.clear();
    for (const Visit& v : o.frontier)
      o.d.decide(v, o.clusters[v.cluster], o.proxy_start[v.cluster] >= 0, targets_, rules_, next);
    o.asked.clear();
    for (const Visit& v : next)
      if (o.proxy_start[v.cluster] == -2) o.asked.push_back(v.cluster);
    std::sort(o.asked.begin(), o.asked.end());
    o.asked.erase(std::unique(o.asked.begin(), o.asked.end()), o.asked.end());
    o.frontier.swap(next);
    if (o.asked.empty()) continue;
    for (int c : o.asked) want.push_back({kRecords, long(c) * kRecordWidth, kRecordWidth});
    return;
  }
  o.plan = plan_let_block(o.d, o.clusters, o.proxy_count);
  o.data = true;
  // In the block's order: each of the 6 particle sections over the runs, then the proxies.
  for (long c = 0; c < 6; ++c)
    for (const auto& r : o.plan.runs) want.push_back({kPoints, c * o.n + r.first, r.second - r.first});
  for (int c : o.plan.sent)
    if (o.d.proxy[c]) want.push_back({kProxies, o.proxy_start[c], 6L * o.proxy_count[c]});
  if (want.empty()) o.active = false;  // a block of nodes only
}

long LetPull::block_size(int owner) const {
  const Owner& o = owners_.at(owner);
  if (o.active) throw Error("LET pull: the walk of rank " + std::to_string(owner) + " did not end");
  return o.data ? o.plan.size() : 0;
}

void LetPull::write_block(int owner, double* out) const {
  const Owner& o = owners_.at(owner);
  if (o.active || !o.data) throw Error("LET pull: no block from rank " + std::to_string(owner));
  write_let_nodes(o.plan, o.d, o.clusters, o.proxy_count, out);
  std::copy(o.got.begin(), o.got.end(), out + o.plan.size() - long(o.got.size()));
}

}  // namespace beatnik::model::tree
