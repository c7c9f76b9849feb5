#pragma once
// The tree solver's lower-degree proxy sets (docs/tree.md "Method", step 3): per cluster the
// sets of degree d = p−1 … 1 that have at most ¾ the proxies of the previous one, each valid at
// ρ < θ^{p/d}. The layout (which sets, where) is always the host's: the interaction lists read
// it. The strengths come from low_strengths on the host, or with -x cuda from the device pass
// (tree_low_device.hpp), which follows the same rule set by set.
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "beatnik/model/tree_let.hpp"

namespace beatnik::model::tree {

// std::allocator that leaves doubles uninitialised on resize: with -x cuda the host's copy of
// the sets is never written (they live in the device far pool) and only its addresses are
// used, to find a range's pool offset (TreeSumsDevice), so its pages are never touched.
template <class T>
struct NoInit : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInit<U>;
  };
  NoInit() = default;
  template <class U>
  NoInit(const NoInit<U>&) {}
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

struct LowSets {  // the lower-degree proxy sets of one tree's clusters
  std::vector<int> first;      // sets of cluster c: [first[c], first[c+1]), fewer proxies as k grows
  std::vector<long> start;     // per set: offset into pts
  std::vector<int> count;      // proxies
  std::vector<double> theta;   // valid when ρ < theta
  std::vector<int> degrees;    // 3 per set
  std::vector<double, NoInit<double>> pts;  // [x|y|z|qx|qy|qz] per set (-x cuda: sized, not written)
};

// The sets of every cluster of t that has its degree-p proxies or all its sources; pts sized
// to them, its contents undefined.
void low_layout(const SourceTree& t, int p, double theta, LowSets& l);

// How set k of cluster c is made (the host's rule; the device pass follows it): from the
// previous set of the cluster when its sides are no finer (Coarsen from its grid), else from
// the degree-p proxies (Coarsen when their grid is the degree-p grid of the cluster and no side
// is finer, else Points: the proxies as point sources), else from the cluster's sources
// (Points). `P` gets the source grid's degrees for Coarsen.
enum class LowFrom { PreviousSet, Proxies, ProxyPoints, Sources };
LowFrom low_from(const SourceTree& t, const LowSets& l, int c, int k, int p, double theta, int* P);

// The sets' points and strengths on the host (l laid out by low_layout).
void low_strengths(const SourceTree& t, int p, double theta, LowSets& l);

}  // namespace beatnik::model::tree
