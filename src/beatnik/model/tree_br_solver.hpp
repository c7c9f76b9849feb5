#pragma once
// Treecode Birkhoff–Rott velocity (-S tree; docs/tree.md): the exact solver's sum (MODEL.md §7,
// every source with the 2K+1 images per periodic dimension around the pair's nearest image,
// DECISIONS.md) with the far field of well-separated clusters replaced by barycentric Lagrange
// interpolation at Chebyshev points (particle–cluster, BLTC): a cluster's sources become
// (p_x+1)(p_y+1)(p_z+1) proxy sources at the tensor Chebyshev points of its box, with proxy
// strengths Σ L_a(x)L_b(y)L_c(z)·q. A target batch B (a leaf of the same tree) takes cluster C's
// image at shift m·L through its proxies when (r_B + r_C) < θ·|centre_B − centre_C − m·L|
// and C has more sources than proxies; otherwise it splits C, and sums a leaf directly.
// --tree-traversal dual (tree_br_dual.cpp; -x cuda too) also interpolates on the target side: internal
// target clusters take well-separated clusters at their Chebyshev points (cluster–cluster) and a
// downward pass brings those velocities to the targets; the leaves keep the walk above.
//
// Images: pair (t, s) takes the images m with |m − a₀(t, s)| ≤ K per periodic dimension, a₀
// the nearest image (image_centre, br_kernel.hpp). a₀ is monotone in t − s, so for a batch
// and a cluster its range follows from the two boxes: an image is taken by every pair (then
// the interpolation applies), by none (skipped), or by some — then C is split, and at a leaf
// each pair is tested (the window's edge, (K+½)·L from the target) — unless C is cut in one
// dimension only and well separated: then an edge term (tree_edge.hpp) takes, for each target,
// the interval of C's sources its window holds through prefix proxy sets. With θ = 0 every pair is
// summed directly: the exact solver's sum up to the order of the additions.
//
// Any rank count; with -x cuda the tree build (model/tree_build_device.hpp: the host's clusters,
// the sources left on the device in tree order; BEATNIK_TREE_BUILD=host builds on the host), the
// upward pass (model/tree_upward.hpp), the lower-degree sets'
// strengths (model/tree_low_device.hpp), the near and far sums (model/tree_sums_device.hpp) and
// the edge terms' tables and sums (model/tree_edge_device.hpp) and the single traversal's lists
// (model/tree_lists_device.hpp, unless BEATNIK_TREE_LISTS=host) run on the device; the LET, the
// dual traversal's lists and the lower-degree sets' layout on the host from the tree's clusters (downloaded), and
// with several ranks and a LET packed on the host from the particles in tree order (downloaded).
// On one rank with the device build the particles never leave the device (no migration: the
// velocities go from tree order into the field on the device). Otherwise the particles live on
// the cutoff solver's spatial decomposition (--spatial-partition) and travel there and back by
// the migration pattern (--migrate-strategy; with the device build in device memory over the
// run's transport, model/br_migrate.hpp, unless BEATNIK_TREE_MIGRATE=host); each rank builds a
// tree over the particles it owns;
// the parts of the other ranks' trees that its targets need (the locally essential tree,
// model/tree_let.hpp) arrive by --let-strategy (comm/let/). Timer regions br.tree.to_spatial,
// br.tree.build (-x cuda: .kernel, .copy), br.tree.upward, br.tree.let (.exchange: the boxes' allgather and the strategy; push
// strategies .pack before it; .unpack), br.tree.low (-x cuda: .copy, .kernel), br.tree.compute (.lists, .near, .far,
// .edge, and with --tree-traversal dual .down, inside it; -x cuda: .lists, .pack, .copy, .wait and the device times .near.kernel,
// .far.kernel, which overlap the host's .lists; with dual .cc (host: the grids' points and ranges), .cc.kernel, .down (host:
// the chains), .down.kernel; then .edge (host: keys, term lists, queueing the
// edge stream) with .edge.keys, .edge.copy (host), .edge.tables, .edge.kernel (device, beside the
// sums) and .edge.wait), br.tree.to_surface. Skeleton mode (a skipping
// gate): the migrations, tree build and LET run on the positions as they are (the messages follow
// them); the proxies' interpolation (upward), the lower-degree sets, the lists and the sums stand
// in, and the velocities returned are zero.
#include <array>
#include <memory>
#include <vector>

#include "beatnik/base/compute_gate.hpp"
#include "beatnik/base/host_worker.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/let/let_exchange.hpp"
#include "beatnik/comm/migrate/migrator.hpp"
#include "beatnik/exec/counting_sort.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/segment_copy.hpp"
#include "beatnik/mesh/spatial_decomposition.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_solver.hpp"
#include "beatnik/model/parameters.hpp"
#include "beatnik/model/tree_edge.hpp"
#include "beatnik/model/tree_build_device.hpp"
#include "beatnik/model/tree_edge_device.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_let.hpp"
#include "beatnik/model/tree_lists_device.hpp"
#include "beatnik/model/tree_low.hpp"
#include "beatnik/model/tree_low_device.hpp"
#include "beatnik/model/tree_sums_device.hpp"
#include "beatnik/model/tree_upward.hpp"
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model {

// θ and degree for a tolerance (relative 2-norm error of the velocity) and a traversal (dual:
// cluster–cluster; else particle–cluster), from the tables that docs/tree.md measured.
struct TreeParameters {
  double theta;
  int degree;
  double edge_margin = tree::kEdgeMargin;  // BRSettings::tree_edge_margin
  // The entry into b's tree settings (θ, degree, edge margin), every field the table sets.
  void apply(BRSettings& b) const {
    b.tree_theta = theta;
    b.tree_degree = degree;
    b.tree_edge_margin = edge_margin;
  }
};
TreeParameters tree_parameters(double tolerance, bool dual);
using tree::kTreeMaxDegree;

// The walk's rules (images, θ, edge terms) of a run's settings on its geometry (host and device
// alike: -x cuda sums the same edge terms on the device). The solver and the dry run plan the
// same LET by it.
tree::Rules tree_rules(const BRSettings& settings, const mesh::Geometry& geo);
// This rank's own SourceTree from its particles `own` ([x|y|z|qx|qy|qz], n each, in the order
// they arrived): `tree` built over them (leaf size `leaf`), the particles in tree order. Shared
// with the dry run (app/dry_run_tree.hpp), which must build the same tree.
void build_source_tree(search::ClusterTree& tree, const double* own, long n, int leaf, tree::SourceTree& t);
// Which clusters of t get degree-p proxies valid at θ (more sources than proxies) and where: sets
// proxy_start / proxy_count and sizes t.proxies (its values left to the upward pass); returns
// each cluster's 3 side degrees.
std::vector<int> layout_proxies(tree::SourceTree& t, int p, double theta);

// -x cuda builds the source tree on the device (model/tree_build_device.hpp) unless the
// environment sets BEATNIK_TREE_BUILD=host (the host build from copied particles, as before; the
// A/B). On one rank the device build's particles then stay on the device: no migration (the dry
// run plans none).
bool tree_device_build();
// BEATNIK_TREE_MARKS=1 (measurement only): a mark in the host's timeline of the call, from the
// solver's other files (tree_br_solver.cpp).
void tree_mark(const char* what);
// -x cuda with the device build: the migration there and back runs on the device (model/
// br_migrate.hpp: the cuts, keys, sort and records in device memory, the records over the run's
// transport; the velocities from the sums' device arrays into the field) unless the environment
// sets BEATNIK_TREE_MIGRATE=host (the particles downloaded, migrated with host MPI and uploaded
// for the build, the velocities downloaded, returned on the host and uploaded; the A/B). The
// same bits either way. Read when a solver is constructed.
bool tree_device_migration();
// -x cuda: the device passes overlapped with the host's work (docs/tree-log.md "One overlap design"):
// the upward pass (one rank; several with the LET gathered on the device) and the lower-degree
// sets are queued without waiting for them, so the host walks the LET, lays out the sets and
// builds the first lists while the GPU runs them (the sums' streams follow them); the build's
// order stays on the device; the host setup's loops run over every thread.
// BEATNIK_TREE_OVERLAP=0 (alias BEATNIK_TREE_LET_OVERLAP=0) restores the sequence before (each
// phase waits for the device; the A/B). The same bits either way. Declared in tree_upward.hpp.

// One velocity() call on this rank.
struct TreeLoad {
  long surface = 0;         // owned surface nodes
  long particles = 0;       // targets (= own sources) on this rank: particles owned in space
  long clusters = 0;        // clusters in the tree
  long direct_pairs = 0;    // (target, source image) pairs summed directly, the self pair included
  long cluster_terms = 0;   // (target, cluster image) interactions through proxies
  long low_terms = 0;       // of those, through a lower-degree set
  long proxy_pairs = 0;     // (target, proxy) pairs those cost
  long edge_terms = 0;      // (target, cluster image) interactions cut by the window's edge (tree_edge.hpp)
  long edge_proxy_pairs = 0;   // (target, proxy) pairs those cost
  long edge_direct_pairs = 0;  // and (target, source) pairs beside a prefix row
  long edge_tables = 0;     // prefix tables built (cluster, dimension, proxy set)
  long edge_bytes = 0;      // their memory
  long cc_terms = 0;        // (target cluster, cluster image) terms summed at the target points (dual traversal)
  long cc_pairs = 0;        // (target point, proxy or source) pairs those cost
  long down_pairs = 0;      // (target, target point) products of the downward pass
  long down_merged = 0;     // -x cuda: merged grids the downward pass made (tree_down.hpp)
  long let_clusters = 0;    // clusters of other ranks' trees received (the LET)
  long let_particles = 0;   // sources of other ranks received
  long let_bytes = 0;       // LET bytes sent to other ranks (rma: fetched from them)
};

class TreeBRSolver : public BRSolver {
 public:
  TreeBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space, const BRSettings& settings, double epsilon,
               comm::CommStats* stats, Timers* timers, const ComputeGate* gate = nullptr);
  void velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) override;
  size_t buffer_bytes() const override;
  std::vector<TreeLoad> take_loads();
  // Sums over every call since construction (the results' interaction counts).
  struct Totals {
    long calls = 0, direct_pairs = 0, cluster_terms = 0, low_terms = 0, proxy_pairs = 0, let_bytes = 0;
    long edge_terms = 0, edge_proxy_pairs = 0, edge_direct_pairs = 0;
    long cc_terms = 0, cc_pairs = 0, down_pairs = 0, down_merged = 0;
  };
  const Totals& totals() const { return totals_; }
  void reset_totals() { totals_ = Totals{}; }  // the skeleton's calibration steps are not the run's
  const mesh::SpatialDecomposition& spatial() const { return spatial_; }
  // -x cuda, the edge stage (tree_br_edges_device.cpp): queued every `edge_pipe` runs of batches
  // as their lists are built (the tables of the keys each adds, then its sums), or with 0 once
  // after all the lists (the one-shot path); −1 takes BEATNIK_TREE_EDGE_PIPE, else 2 with the
  // dual traversal and 0 with the single. The same bits either way. With the lists on the device
  // (lists_on_device) always one-shot. min_run: the fewest batches a run of the host's lists
  // takes (the tests use small runs).
  int edge_pipe = -1;
  int min_run = 256;
  // The first run's batches split into this many runs (RunCut::first), so that the device's
  // first sums start sooner; −1 takes BEATNIK_TREE_RAMP, else 1. The same lists and bits.
  int ramp = -1;
  const TreeEdgeDevice* edge_device() const { return edge_dev_.get(); }  // null before a -x cuda call
  // The dual traversal's lists by the straightforward traversal (every pair re-decided from
  // scratch at every level: the lists' reference, kept for the tests and the A/B) instead of the
  // fast one (dual_node: the same lists). Set from BEATNIK_TREE_DUAL_LISTS=reference.
  bool dual_reference = false;
  // Tests and measurements, host: the last call's dual lists built again (dual_reference picks
  // the traversal) from its trees, and those lists flattened: per batch its near, far and edge
  // terms, then per own cluster its cluster–cluster terms, each list's size then its terms' fields.
  void dual_lists_again() { dual_lists(); }
  std::vector<long> dual_terms() const;
  // The same lists with the leaves' walks made by the lists' kernels in `space` (queued: as -x
  // cuda's dual_leaves_queue, ListsPass::queue_pending; else ListsPass::run_pending) from the pairs
  // the host's traversal hands the leaves, flattened as dual_terms (the host's lists are made
  // again afterwards).
  std::vector<long> dual_terms_kernel(exec::Space space = exec::Space::Host, bool queued = false);
  // -x cuda, single traversal: the lists built on the device (1: the lists' kernels,
  // tree_br_lists_device.cpp; their ranges stay there) or on the host (0: lists(), their ranges
  // uploaded); −1 takes BEATNIK_TREE_LISTS=host|device, else the device. The same bits either way.
  int lists_on_device = -1;
  // -x cuda, dual traversal: the leaves' walks on the device (1: each run's pending pairs walked
  // by the lists' kernels, ListsPass::queue_pending; their near and far terms and ranges stay
  // there) or on the host (0: leaf_visit); −1 takes BEATNIK_TREE_DUAL_LEAVES=host|device, else
  // the host (faster as measured). The same lists either way, so the same bits.
  int dual_leaves_on_device = -1;
  // Tests, single traversal: the last call's host lists (near_, far_, edge_) flattened as
  // dual_terms without the cluster–cluster terms; and the same lists made again by the lists'
  // kernels (tree_lists_device.hpp, run in `space`) from the call's trees, flattened alike.
  std::vector<long> list_terms() const;
  std::vector<long> list_terms_kernel(exec::Space space = exec::Space::Host) const;
  // Tests, single traversal, after a host call: the edge stage's keys numbered on the host
  // (edge_keys) and by the lists' kernels (ListsPass::edge_keys, in `space`), flattened alike:
  // the key count, each key's 4 fields, then per batch its edge terms' count and table numbers.
  std::vector<long> edge_key_terms();
  std::vector<long> edge_key_terms_kernel(exec::Space space = exec::Space::Host);
  // Tests, single traversal, after a host call: every batch's sums ranges from the host's lists
  // (near_ranges, far_ranges) and from the lists' kernels (ListsPass::ranges, in `space`), each
  // as (offset, stride, count, mx, my, window) in pools laid out tree by tree (sources; proxies;
  // lower-degree sets), flattened per batch (near count, ranges, far count, ranges); then the
  // terms through a lower-degree set times their batch's targets.
  std::vector<long> range_terms();
  std::vector<long> range_terms_kernel(exec::Space space = exec::Space::Host);

 private:
  struct Term {  // one entry of a batch's interaction list
    int tree;      // sources_ index: 0 this rank's tree, then the LET parts by source rank
    int cluster;
    int mx, my;    // image shift (m·L per periodic dimension)
    bool partial;  // near only: test each pair's window
    int low = -1;  // far and edge: the lower-degree set used (−1: the degree-p proxies)
    int axis = -1; // edge only: the dimension the window's edge cuts
    int target_degree = 0;  // cluster–cluster only: the degree of the target cluster's grid
  };
  static constexpr int kSources = -2;  // Term::low of a cluster–cluster term on C's sources
  using LowSets = tree::LowSets;  // per tree (tree_low.hpp)
  void to_spatial(const double* p);  // p: the packed particles in mig_space_
  void build();
  void upward();
  void upward_finish();  // waits for an upward pass queued without waiting (upward_queues)
  void exchange_let();
  bool let_on_device() const;
  bool upward_queues() const;
  void pack_let_device(const double* send, const std::vector<long>& at, std::vector<tree::LetCopy>& copies);
  void low_sets(int tree);
  void low_device();
  int cheapest_low(const tree::Ball& batch, int tree, int cluster, int mx, int my, double margin = 1.0) const;
  void balls();
  int batches() const;
  void lists(int b0, int b1);
  void near();
  void far();
  void edges();
  std::vector<std::array<int, 4>> edge_keys();
  const double* edge_set(const std::array<int, 4>& key, int* dg, int& m) const;
  void edges_device();
  void edges_device_lists();  // edges_device() from the lists built on the device
  std::vector<EdgeTableSpec> edge_specs(const std::vector<std::array<int, 4>>& keys) const;
  std::vector<long> batch_first() const;  // the batches' target bounds (nb + 1)
  void edge_tables_queue(const std::vector<EdgeTableSpec>& specs);
  void edge_stage_queued(int keys, double host_s);
  // The lists' kernels on this call's trees (lists_device, the tests; the trees' counts out).
  void lists_kernel(tree::ListsPass& pass, std::vector<long>* clusters = nullptr, std::vector<long>* sets = nullptr) const;
  void edge_layout();
  long edge_slot(const Term& e) const;  // edge_keys()'s slot of an edge term's key
  EdgeTableSpec edge_spec(const std::array<int, 4>& key) const;
  int edge_pipe_runs() const;
  void edge_pipe_begin();
  double edge_pipe_run(int b0, int b1);  // returns its host time outside TreeEdgeDevice
  HostWorker* edge_worker();  // the pieces' thread (null: BEATNIK_TREE_EDGE_WORKER=0, inline)
  long cluster_terms() const;
  long low_terms(int b) const;
  void near_ranges(int b, std::vector<BRSourceRange>& out) const;
  void far_ranges(int b, std::vector<BRSourceRange>& out) const;
  BRSourceRange term_range(const Term& e) const;  // a far or cluster–cluster term's sources
  long sums_host(bool far, double* acc);  // far: also sets load_.low_terms
  void compute_device();
  bool device_lists() const;  // this call's lists on the device (lists_on_device)
  void lists_input(std::vector<tree::ListTree>& trees, std::vector<tree::ListTarget>& targets,
                   std::vector<long>& clusters, std::vector<long>& sets) const;
  long lists_device(const std::vector<long>& batch);  // returns the far (target, cluster image) terms
  void to_surface(const mesh::Field& out);
  struct Lists {
    std::vector<Term>&near, &far, &edge;
  };
  struct Target {  // a batch B and the target box T holding it (the box the LET's owners walked for it)
    const search::Cluster &B, &T;
    const tree::Ball &b, &t;  // their centres and radii
  };
  Target target(int leaf) const;  // leaf: a cluster of the own tree
  // The walk's decision on cluster C of `tree` at image (mx, my) for a batch: a term into `out`,
  // nothing, or (true) split C, its children visited with `full_next`. span: tree::span(B, C),
  // read when !full.
  bool decide(const Target& tg, int tree, int cluster, int mx, int my, bool full, const tree::ImageSpan& span,
              Lists& out, bool& full_next) const;
  // One image's walk from cluster C (the dual traversal's leaves; the lists' reference).
  void visit(const Target& tg, int tree, int cluster, int mx, int my, bool full, Lists& out) const;
  // Every image of a batch at once down one source tree (lists): per image the same decisions
  // in the same order as visit, each node's span computed once for all of them.
  struct Active {  // an image still descending
    int image;     // index into the batch's images, mx-major as lists' loops
    bool full;
  };
  struct ImageLists {  // one image's terms of the walk in progress
    std::vector<Term> near, far, edge;
  };
  struct Walk {  // a thread's scratch, reused across batches
    std::vector<ImageLists> images;
    std::vector<std::vector<Active>> levels;  // the images descending, per depth
  };
  void walk(const Target& tg, int tree, int cluster, int depth, Walk& w) const;
  // Dual traversal (tree_br_dual.cpp): cluster–cluster terms of this rank's target clusters,
  // their sums at the target points and the downward pass; the leaves keep visit's lists.
  struct Pending {  // a (source cluster, image) a target cluster passes to its children
    int tree, cluster, mx, my;
    bool full;
  };
  void dual_lists(bool collect = false);
  void dual_node(int b, const std::vector<Pending>& in);
  static constexpr long kTaskLeaves = 8;  // dual_node: the smallest subtree (in leaves) made a task of its own
  void dual_leaf(int b, const std::vector<Pending>& in, bool fast);
  struct DualTarget;  // what examine reads of a target cluster, computed once per cluster
  DualTarget dual_target(int b) const;
  void examine(DualTarget& t, const Pending& c, std::vector<Pending>& down);
  bool may_take_cc(DualTarget& t, int tree, int cluster, const tree::Ball& c, double dist) const;
  int grid_points(DualTarget& t, int d) const;  // t's grid at degree d: its points (cached)
  double slack_ = 0.0;  // may_take_cc's rounding allowance (dual_begin)
  std::vector<std::vector<double>> rmin_;  // per source tree, per cluster: the smallest radius in its subtree
  void leaf_visit(const Target& tg, int tree, int cluster, int mx, int my, bool full, Lists& out) const;
  void dual_node_reference(int b, const std::vector<Pending>& in, int depth);  // dual_reference
  void examine_reference(int b, const Pending& c, std::vector<Pending>& down);
  void cc_sums();
  void down();
  // -x cuda (compute_device): the dual traversal's top levels serially down to subtrees of at
  // most `run` batches (parts, in tree order: contiguous batches), each run's parts' lists, the
  // grids' sums of a set of target clusters queued on the device, the downward pass queued.
  struct DualPart {
    int root;                   // the subtree's root cluster
    int b0, b1;                 // its batches
    std::vector<Pending> in;    // what its parent handed down
  };
  void dual_begin();
  std::vector<Pending> dual_roots() const;  // every source tree's root at every image
  // compute_device's runs of batches: `run` batches each, except that the batches before the
  // first `run` come in runs of `first` (≤ run), so that the device's first sums start sooner.
  struct RunCut {
    int run = 1, first = 1;
    int at(int b0) const { return b0 < run ? first : run; }  // the batches of a run from b0
  };
  void dual_device_begin(RunCut cut, std::vector<DualPart>& parts);
  void dual_top(int b, const std::vector<Pending>& in, RunCut cut, std::vector<DualPart>& parts);
  void dual_device_run(std::vector<DualPart>& parts, size_t k0, size_t k1);
  void dual_internal(int b, std::vector<int>& out) const;  // b's internal clusters with terms
  bool device_dual_leaves() const;  // this call's dual leaves walked on the device (dual_leaves_on_device)
  // Run `run`'s batches [b0, b1): their leaves (their pairs in pend_) queued on the device
  // without waiting; then, finished (after the next run's host work), their edge terms back to
  // edge_ and their sums queued. finish returns the far (target, cluster image) terms and adds the
  // low terms to `low`. (tree_br_lists_device.cpp)
  void dual_leaves_queue(int run, int b0, int b1, const std::vector<long>& batch);
  long dual_leaves_finish(int run, int b0, int b1, const std::vector<long>& batch, long& low);
  void pending_items(int b0, int b1, std::vector<tree::ListPending>& items, std::vector<long>& first) const;
  // The call's trees, targets and range tables uploaded for the leaves' passes (after
  // dual_device_begin: the balls; and device_->begin: the pools' bases).
  void dual_leaves_begin();
  std::vector<std::vector<Pending>> pend_;  // dual, leaves on the device: each batch's pairs (dual_leaf)
  bool dual_collect_ = false;               // dual_leaf keeps its pairs in pend_ instead of walking them
  struct DualLeaves {  // the call's tables for the leaves' passes, and a pass per run
    std::vector<tree::ListTarget> targets;  // every batch, as the lists' kernels read it
    std::vector<long> clusters, sets;       // per tree: its clusters and lower-degree sets
    std::vector<std::unique_ptr<tree::ListsPass>> passes;  // the runs' sums read their ranges: one each
  };
  DualLeaves dual_dev_;
  void cc_device(const std::vector<int>& clusters);
  void down_device(const std::vector<long>& batch);
  int first_batch(long begin) const;  // the first batch whose targets start at or after `begin`
  std::vector<int> dual_top_;  // the top levels' internal clusters (compute_device)
  std::vector<int> dev_gfirst_, dev_gcount_;  // per own cluster: its device grids
  std::vector<TreeSumsDevice::DownGrid> dev_grids_;
  std::vector<double> dev_sw_;  // the grids' Chebyshev nodes and weights
  // cc_device's per-grid range lists, kept from run to run and call to call (their capacity:
  // thousands of small vectors a run were allocated afresh).
  std::vector<std::vector<BRSourceRange>> cc_near_, cc_far_;

  const mesh::SurfaceMesh& mesh_;
  exec::Space space_;
  BRSettings settings_;
  double eps_;
  Timers* timers_;
  const ComputeGate* gate_;  // skeleton mode: upward, low and compute stand in
  int rank_ = 0, size_ = 1;
  tree::Rules rules_;
  long n_ = 0;     // owned surface nodes
  long nown_ = 0;  // particles owned in space (this call)
  mesh::SpatialDecomposition spatial_;
  std::unique_ptr<comm::Migrator> migrator_;
  std::unique_ptr<comm::LetExchange> let_;
  exec::CountingSort by_dest_;
  // Where the migration runs (the buffers below in it): space_ on -x host and with the device
  // migration, else the host (BEATNIK_TREE_MIGRATE=host or BEATNIK_TREE_BUILD=host on -x cuda).
  exec::Space mig_space_ = exec::Space::Host;
  std::vector<double> pts_;                 // surface order [x|y|z|qx|qy|qz] (host)
  exec::Buffer<int> keys_;                  // destination rank of each
  exec::Buffer<double> send_;               // records of 6, by destination
  exec::Buffer<double> recv_;               // records of 6, by source
  std::vector<long> send_counts_, recv_counts_;
  std::vector<double> own_;                 // owned particles [x|y|z|qx|qy|qz]
  search::ClusterTree tree_;
  std::vector<search::Cluster> boxes_;      // this rank's target boxes, as every rank received them
  std::vector<int> box_of_;                 // per cluster of the own tree: its target box (tree_let.hpp)
  std::vector<tree::SourceTree> sources_;   // [0] this rank's tree (tree order), then the LET parts
  std::vector<LowSets> low_;                // per sources_ entry
  std::vector<std::vector<tree::Ball>> balls_;  // per sources_ entry: each cluster's centre and radius
  std::vector<tree::Ball> box_balls_;           // boxes_'
  std::vector<long> let_send_counts_, let_recv_counts_;
  struct LetArrays {  // a LET part's particles and proxies as received (valid until the next call)
    const double* pts;
    const double* proxies;
    exec::Space space;  // Device: the NCCL receive buffer; Host: the blocks in host memory
  };
  std::vector<LetArrays> let_in_;  // per LET part (sources_[1 + k])
  exec::SegmentCopy let_copy_{exec::Space::Host};  // -x cuda: the LET's pieces gathered on the device
  std::vector<std::vector<Term>> near_, far_, edge_;  // per batch (leaf)
  std::vector<std::vector<Term>> cc_;         // per own cluster: its cluster–cluster terms (dual)
  std::vector<int> leaf_of_, parent_;         // own cluster -> batch (−1: internal), parent (−1: root)
  struct TargetGrid {  // the points of one own cluster at one degree, and their velocities
    int cluster, degree, m;
    int dg[3];
    long start;  // [Ux|Uy|Uz] at grid_u_[start]
  };
  void cluster_grids(int c, std::vector<TargetGrid>& out) const;  // c's grids by falling degree
  std::vector<double> grid_theta_;            // per target degree d: valid at ρ < θ^{p/d}
  std::vector<TargetGrid> grids_;             // by cluster, then degree (descending)
  std::vector<int> grid_first_;               // own cluster c: grids_[grid_first_[c], grid_first_[c+1])
  std::vector<double> grid_u_;
  std::vector<std::vector<int>> edge_table_;  // per batch: the table of each edge term
  std::vector<int> edge_slot_;  // edge_keys' scratch: per possible key, its index (−1: unused)
  std::vector<long> edge_base_;  // edge_keys' slot layout: tree s's slots start at edge_base_[s]
  std::vector<tree::EdgeTable> tables_;       // the edge terms' prefix tables (this call)
  std::vector<double> acc_near_, acc_far_;     // tree order [ux|uy|uz]
  exec::Buffer<double> back_send_, back_recv_;  // records of 3 (in mig_space_)
  bool acc_on_device_ = false;  // this call: the velocities stayed in device_'s arrays (no acc_near_/acc_far_)
  std::vector<TreeLoad> loads_;
  TreeLoad load_;
  Totals totals_;
  std::unique_ptr<TreeSumsDevice> device_;   // -x cuda: the sums' device buffers
  std::unique_ptr<TreeUpward> upward_dev_;   // -x cuda: the upward pass on the device
  std::unique_ptr<TreeLowPass> low_dev_;     // -x cuda: the lower-degree sets on the device
  std::unique_ptr<tree::ListsPass> lists_dev_;  // -x cuda: the lists' kernels and the sums' ranges on the device
  std::unique_ptr<TreeEdgeDevice> edge_dev_;  // -x cuda: the edge terms' tables and sums on the device
  std::unique_ptr<TreeBuildDevice> build_dev_;  // -x cuda: the tree build on the device (null: BEATNIK_TREE_BUILD=host)
  exec::Buffer<double> dev_own_;  // -x cuda, several ranks: the received particles, as columns, for the device build
  bool local_ = false;  // this call: one rank, device build: no migration, the particles stay in dev_pts_
  bool overlap_ = false;  // this call: the device passes overlapped (tree_overlap(); upward_queues())
  exec::Buffer<double> dev_pts_, dev_out_;   // -x cuda: packed particles, velocities to `out`
  std::vector<std::vector<BRSourceRange>> dev_near_, dev_far_;  // -x cuda: every batch's ranges
  bool broken_ = false;  // a position is not finite: the call returns NaN velocities
  bool low0_ = false;    // this call: low_[0] laid out already (beside the upward pass, exchange_let)
  // -x cuda: the edge pipe's pieces' host part beside the lists (edge_worker()). Last, so that it
  // is joined before anything its jobs use is destroyed.
  std::unique_ptr<HostWorker> edge_worker_;
};

}  // namespace beatnik::model
