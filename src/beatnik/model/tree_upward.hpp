#pragma once
// The tree solver's upward pass written once for host and device (exec::parallel_for): every
// cluster's proxy strengths q̂_abc = Σ_k L_a(x_k)L_b(y_k)L_c(z_k)·q_k from its sources
// (docs/tree.md "On the GPU"). -x cuda runs it on the device from the uploaded sources; the host
// solver keeps its per-cluster loop (tree_br_solver.cpp), which this equals to round-off
// (tests/unit/test_tree_upward.cpp).
//
// Depth by depth, deepest first, so that a cluster's sources may be deeper clusters' proxies: a
// descendant whose grid has at least the cluster's degree on every side stands for its points
// exactly (to round-off), so a cluster sums a few proxy sets instead of all its points, O(N +
// clusters·m) instead of O(N·depth) (BEATNIK_TREE_UPWARD=points: from the points, the A/B;
// docs/tree-log.md "The upward pass from deeper proxies").
//
// Why passes per tree level instead of a loop per cluster: a cluster near the root would leave
// the machine idle with one thread (or block) per cluster. The clusters of one depth are
// disjoint, so per depth: (0) their sources gathered from their pieces (point sources, deeper
// proxies) into one array; (1) every source's Lagrange values on its cluster's grid into a table
// (one item per source); (2) partial sums over chunks of at most kChunk sources (one item per
// chunk and proxy); (3) each proxy's chunks summed in chunk order (one item per proxy), so the
// result does not depend on the thread count.
#include <memory>
#include <vector>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model {

class TreeUpward {
 public:
  explicit TreeUpward(exec::Space space);
  // Sources pts ([x|y|z|qx|qy|qz], n each, tree order; host, or with pts_on_device already in
  // this space: the device build's, model/tree_build_device.hpp); cluster c has a grid when
  // start[c] ≥ 0: degrees deg[3c..3c+2] (Chebyshev points of the second kind on its box),
  // m = count[c] proxies written to proxies[start[c] ..] as [x|y|z|qx|qy|qz] (host, total
  // doubles; on the device only, without `download`). p bounds every side's degree.
  // wait = false (device): returns once the passes are queued on the work stream, without waiting
  // for them (the caller's later work on that stream, and on blocking streams, follows them);
  // the host builds each depth's grids, chunks and points into page-locked memory while the
  // device runs the depth before. finish() then waits for them, reads their time from two CUDA
  // events and makes the download; a host read of the proxies needs finish() first.
  void run(const double* pts, long n, const std::vector<search::Cluster>& cl, const std::vector<long>& start,
           const std::vector<int>& count, const std::vector<int>& deg, int p, double* proxies, long total,
           bool download = true, bool pts_on_device = false, bool wait = true);
  // Waits for a run queued with wait = false (nothing otherwise): kernel_s becomes the span between
  // events recorded before and after its passes (device time), wait_s the time the host waited
  // here, download_s the download's (when asked).
  void finish();
  bool pending() const { return pending_; }
  // After a device run: its copy of the sources and the proxies it computed (null when no
  // cluster had a grid: nothing was uploaded), which the far and near pools copy on the device.
  const double* device_sources() const { return dev_pts_; }
  const double* device_proxies() const { return dev_proxies_; }
  // Seconds of the last run: the host's setup (depths, grids, chunks, Chebyshev points) and the
  // uploads (a run that does not wait: its whole host time, the setup level by level between the
  // levels' passes), the passes (wall time, fenced; a run that did not wait: 0 until finish(),
  // then from its events), the download; wait_s: the time finish() waited (0 with wait = true).
  double upload_s = 0, kernel_s = 0, download_s = 0, wait_s = 0;

  struct Grid {  // a cluster with proxies, as the passes read it
    long k0;     // its first source in the level's gathered sources (pass 0: equal to slot)
    long slot;   // its first source's slot in the level's Lagrange table (a column: tree_upward.cpp)
    long out;    // offset of its proxies
    long item;   // its first proxy among the level's proxies (pass 3)
    int m, chunk0, chunk1;
    int dg[3];
  };
  struct Chunk {  // at most kChunk consecutive sources of one grid
    int grid;
    long slot0, slot1, k0;  // its slots; its first source in the gathered sources (= slot0)
    long part;  // offset of its 3·m partial sums (per level)
    long item;  // its first item among the level's (chunk, proxy) items (pass 2)
  };
  struct Piece {  // consecutive sources of one grid: point sources, or a deeper cluster's proxies
    long slot;    // its first source's slot in the level
    long off;     // its first source among the points (`proxies`: in the proxies), `stride` apart per component
    long stride;
    int proxies;
  };

 private:
  exec::Space space_;
  const double *dev_pts_ = nullptr, *dev_proxies_ = nullptr;
  exec::Buffer<double> pts_, nodes_, table_, part_, out_, src_;
  exec::Buffer<Grid> grids_;
  exec::Buffer<Chunk> chunks_;
  exec::Buffer<Piece> pieces_;
  comm::PinnedBuffer stage_;  // a run that does not wait: the levels' grids, chunks and points
  std::unique_ptr<DeviceClock> clock_;  // the passes' events (a run that does not wait)
  int ev0_ = 0, ev1_ = 0;
  bool pending_ = false, download_ = false;  // a run queued without waiting; its download asked
  double* proxies_host_ = nullptr;
  long total_ = 0;
};

// -x cuda: the solver's device passes overlapped with its host work (docs/tree-log.md "One overlap
// design"): the upward pass and the lower-degree sets queued without waiting, the host setup's
// loops over every thread (these files' and the solver's). BEATNIK_TREE_OVERLAP=0 (or its alias
// BEATNIK_TREE_LET_OVERLAP=0) restores the sequence before both (the A/B). Read once.
bool tree_overlap();

}  // namespace beatnik::model
