#pragma once
// Treecode Birkhoff–Rott velocity (-S tree; docs/tree.md): the exact solver's sum (MODEL.md §7,
// every source with the 2K+1 images per periodic dimension around the pair's nearest image,
// DECISIONS.md) with the far field of well-separated clusters replaced by barycentric Lagrange
// interpolation at Chebyshev points (particle–cluster, BLTC): a cluster's sources become
// (p_x+1)(p_y+1)(p_z+1) proxy sources at the tensor Chebyshev points of its box, with proxy
// strengths Σ L_a(x)L_b(y)L_c(z)·q. A target batch B (a leaf of the same tree) takes cluster C's
// image at shift m·L through its proxies when (r_B + r_C) < θ·|centre_B − centre_C − m·L|
// and C has more sources than proxies; otherwise it splits C, and sums a leaf directly.
//
// Images: pair (t, s) takes the images m with |m − a₀(t, s)| ≤ K per periodic dimension, a₀
// the nearest image (image_centre, br_kernel.hpp). a₀ is monotone in t − s, so for a batch
// and a cluster its range follows from the two boxes: an image is taken by every pair (then
// the interpolation applies), by none (skipped), or by some — then C is split, and at a leaf
// each pair is tested (the window's edge, (K+½)·L from the target). With θ = 0 every pair is
// summed directly: the exact solver's sum up to the order of the additions.
//
// One rank, host only, for now: the locally essential tree (distributed) and the device
// version are not available yet (the program refuses them). Timer regions br.tree.build,
// br.tree.upward, br.tree.compute (.lists, .near, .far inside it).
#include <vector>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_solver.hpp"
#include "beatnik/model/parameters.hpp"
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model {

// θ and degree for a tolerance (relative 2-norm error of the velocity), from the table that
// docs/tree.md measured.
struct TreeParameters {
  double theta;
  int degree;
};
TreeParameters tree_parameters(double tolerance);
inline constexpr int kTreeMaxDegree = 24;

// One velocity() call on this rank.
struct TreeLoad {
  long particles = 0;       // targets (= sources) on this rank
  long clusters = 0;        // clusters in the tree
  long direct_pairs = 0;    // (target, source image) pairs summed directly, the self pair included
  long cluster_terms = 0;   // (target, cluster image) interactions through proxies
  long proxy_pairs = 0;     // (target, proxy) pairs those cost
};

class TreeBRSolver : public BRSolver {
 public:
  TreeBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space, const BRSettings& settings, double epsilon,
               comm::CommStats* stats, Timers* timers);
  void velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) override;
  size_t buffer_bytes() const override;
  std::vector<TreeLoad> take_loads();
  // Sums over every call since construction (the results' interaction counts).
  struct Totals {
    long calls = 0, direct_pairs = 0, cluster_terms = 0, proxy_pairs = 0;
  };
  const Totals& totals() const { return totals_; }

 private:
  struct Term {  // one entry of a batch's interaction list
    int cluster;
    int mx, my;    // image shift (m·L per periodic dimension)
    bool partial;  // near only: test each pair's window
  };
  void build();
  void upward();
  void lists();
  void near();
  void far();
  void visit(int batch, int cluster, int mx, int my, bool full, std::vector<Term>& near,
             std::vector<Term>& far) const;

  const mesh::SurfaceMesh& mesh_;
  BRSettings settings_;
  double eps_;
  Timers* timers_;
  BRImages images_;
  long n_ = 0;
  std::vector<double> pts_;     // surface order [x|y|z|qx|qy|qz]
  std::vector<double> sorted_;  // tree order, the same
  search::ClusterTree tree_;
  std::vector<long> proxy_start_;  // per cluster: offset into proxies_ (−1: none), 6·m doubles there
  std::vector<int> proxy_count_;   // per cluster: m
  std::vector<double> proxies_;
  std::vector<std::vector<Term>> near_, far_;  // per batch (leaf)
  std::vector<double> acc_near_, acc_far_;     // tree order [ux|uy|uz]
  std::vector<TreeLoad> loads_;
  TreeLoad load_;
  Totals totals_;
};

}  // namespace beatnik::model
