// The upward pass in three passes per tree depth (tree_upward.hpp). Compiled by nvcc in the CUDA
// build (the lambdas run as device kernels there), by the host compiler otherwise.
#include "beatnik/model/tree_upward.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "beatnik/base/env.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/exec/device_clock.hpp"
#include "beatnik/exec/last_at_most.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_lagrange.hpp"

namespace beatnik::model {
namespace {

constexpr long kChunk = 256;  // sources per partial sum: enough items to fill a GPU at every depth
#if defined(__CUDACC__)
#define UPWARD_UNROLL _Pragma("unroll 8")
#else
#define UPWARD_UNROLL _Pragma("GCC unroll 8")
#endif

// The data of v in space s: v itself on the host, else a copy in b.
template <class T>
const T* place(exec::Buffer<T>& b, exec::Space s, const T* v, size_t n) {
  if (s == exec::Space::Host) return v;
  exec::grow(b, s, std::max<size_t>(n, 1));
  exec::copy(b.data(), s, v, exec::Space::Host, n);
  return b.data();
}

struct Level {  // the grids [g0, g1), chunks [h0, h1) and source pieces [q0, q1) of one depth
  int g0, g1, h0, h1, q0, q1;
  long slots, citems, gitems, parts;
};

using Piece = TreeUpward::Piece;

// BEATNIK_TREE_UPWARD=points: every cluster's proxies from its points, O(N·depth) (the pass
// before 2026-11-29, third session; the A/B). Read once.
bool upward_from_proxies() {
  static const bool on = env::choice("BEATNIK_TREE_UPWARD", {"proxies", "points"}).value_or("proxies") == "proxies";
  return on;
}

// Cluster c's sources for its proxies, appended to `pieces` from the level's slot `slot`; returns
// their number. A descendant whose grid has at least c's degree on every side gives its proxies
// (exact to round-off: c's basis polynomial L_a·L_b·L_e has at most that grid's degrees, so
// interpolating it on that grid reproduces it and Σ_j L(y_j)·q̂_j = Σ_k L(x_k)·q_k over the
// descendant's points); any other descendant its own pieces, down to the point sources of its
// leaves. So a cluster near the root sums two or four proxy sets instead of most of the points,
// and the pass costs O(N + clusters·m) instead of O(N·depth).
long source_pieces(const std::vector<search::Cluster>& cl, const std::vector<long>& start,
                   const std::vector<int>& count, const std::vector<int>& deg, long n, int c, long slot,
                   std::vector<Piece>& pieces) {
  const long first = slot;
  const size_t first_piece = pieces.size();
  const bool deeper = upward_from_proxies();
  const auto points = [&](long b, long e) {  // point sources [b, e), merged with adjacent ones
    if (e <= b) return;
    const bool merge = pieces.size() > first_piece && !pieces.back().proxies &&
                       pieces.back().off + (slot - pieces.back().slot) == b;
    if (!merge) pieces.push_back({slot, b, n, 0});
    slot += e - b;
  };
  const auto exact = [&](int k) {
    if (start[k] < 0 || count[k] >= cl[k].count()) return false;  // no grid, or no cheaper than its points
    for (int d = 0; d < 3; ++d)
      if (deg[3 * size_t(k) + d] < deg[3 * size_t(c) + d]) return false;
    return true;
  };
  const auto cover = [&](const auto& self, int k) -> void {
    const search::Cluster& K = cl[k];
    int ch[2] = {K.child[0], K.child[1]};
    if (ch[0] >= 0 && ch[1] >= 0 && cl[ch[1]].begin < cl[ch[0]].begin) std::swap(ch[0], ch[1]);
    long pos = K.begin;
    for (int j : ch) {
      if (j < 0) continue;
      points(pos, cl[j].begin);
      if (exact(j)) {
        pieces.push_back({slot, start[j], count[j], 1});
        slot += count[j];
      } else {
        self(self, j);
      }
      pos = cl[j].end;
    }
    points(pos, K.end);
  };
  if (deeper) cover(cover, c);
  else points(cl[c].begin, cl[c].end);
  return slot - first;
}

#if defined(BEATNIK_DEVICE_COMPILE)
// Pass 2 on the device: a thread block per chunk. Its sources' Lagrange values (the table's
// columns, kChunkSrc sources at a time: coalesced loads) and strengths go to shared memory, then
// each thread sums its proxies over them in source order: the same products in the same order
// as the item per (chunk, proxy), which read the columns from global memory, a warp's loads
// scattered over up to 14 lines (14.8 ms a call at 1024² on an H200, ncu, 13 depths).
constexpr int kChunkThreads = 128, kChunkSrc = 64, kChunkPer = 6;  // 6 groups: a degree-8 grid (729) at once
__global__ void __launch_bounds__(kChunkThreads) chunk_sums_kernel(const TreeUpward::Chunk* HH, int h0,
                                                                    const TreeUpward::Grid* GG, const double* T,
                                                                    long slots, const double* P, long n, int p1,
                                                                    double* part) {
  extern __shared__ double csh[];  // [kChunkSrc][3·p1] Lagrange values, then [3][kChunkSrc] strengths
  const int W = 3 * p1, tid = threadIdx.x;
  double* Ls = csh;
  double* qs = csh + kChunkSrc * W;
  const TreeUpward::Chunk& h = HH[h0 + blockIdx.x];
  const TreeUpward::Grid& g = GG[h.grid];
  const int m = g.m, n1 = g.dg[1] + 1, n2 = g.dg[2] + 1;
  double* o = part + h.part;
  for (int g0 = 0; g0 < m; g0 += kChunkPer * kChunkThreads) {
    const int nu = (m - g0 + kChunkThreads - 1) / kChunkThreads < kChunkPer
                       ? (m - g0 + kChunkThreads - 1) / kChunkThreads
                       : kChunkPer;  // the groups this grid has (uniform over the block)
    double s[kChunkPer][3];
    int ia[kChunkPer], ib[kChunkPer], ie[kChunkPer];
#pragma unroll
    for (int u = 0; u < kChunkPer; ++u) {
      const int idx = g0 + tid + u * kChunkThreads, id = idx < m ? idx : 0;
      ia[u] = id / (n1 * n2), ib[u] = (id / n2) % n1, ie[u] = id % n2;
      s[u][0] = s[u][1] = s[u][2] = 0.0;
    }
    for (long r0 = h.slot0; r0 < h.slot1; r0 += kChunkSrc) {
      const int cnt = static_cast<int>(h.slot1 - r0 < kChunkSrc ? h.slot1 - r0 : kChunkSrc);
      __syncthreads();  // (the previous sources' sums done)
      for (int u = tid; u < W * cnt; u += kChunkThreads) {
        const int r = u % cnt, col = u / cnt;
        if (col % p1 <= g.dg[col / p1]) Ls[r * W + col] = T[long(col) * slots + r0 + r];
      }
      const long k = h.k0 + (r0 - h.slot0);
      for (int u = tid; u < 3 * cnt; u += kChunkThreads) {
        const int r = u % cnt, c = u / cnt;
        qs[c * kChunkSrc + r] = P[(3 + c) * n + k + r];
      }
      __syncthreads();
      for (int r = 0; r < cnt; ++r) {
        const double* Lr = Ls + r * W;
        const double q0 = qs[r], q1 = qs[kChunkSrc + r], q2 = qs[2 * kChunkSrc + r];
#pragma unroll
        for (int u = 0; u < kChunkPer; ++u) {
          if (u < nu) {
            const double f = Lr[ia[u]] * Lr[p1 + ib[u]] * Lr[2 * p1 + ie[u]];
            s[u][0] += f * q0;
            s[u][1] += f * q1;
            s[u][2] += f * q2;
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kChunkPer; ++u) {
      const int idx = g0 + tid + u * kChunkThreads;
      if (idx < m) {
        o[idx] = s[u][0];
        o[m + idx] = s[u][1];
        o[2 * m + idx] = s[u][2];
      }
    }
  }
}
#endif

}  // namespace

bool tree_overlap() {
  static const bool on = [] {
    for (const char* name : {"BEATNIK_TREE_OVERLAP", "BEATNIK_TREE_LET_OVERLAP"})  // (the second: an alias)
      if (env::choice(name, {"0", "1"}) == "0") return false;
    return true;
  }();
  return on;
}

TreeUpward::TreeUpward(exec::Space space)
    : space_(space),
      pts_(space, 0),
      nodes_(space, 0),
      table_(space, 0),
      part_(space, 0),
      out_(space, 0),
      src_(space, 0),
      grids_(space, 0),
      chunks_(space, 0),
      pieces_(space, 0) {}

void TreeUpward::run(const double* pts, long n, const std::vector<search::Cluster>& cl, const std::vector<long>& start,
                     const std::vector<int>& count, const std::vector<int>& deg, int p, double* proxies, long total,
                     bool download, bool pts_on_device, bool wait) {
  const exec::Space S = space_;
  if (S == exec::Space::Host) wait = true;
  // The last run's passes done (its uploads read stage_, which this run writes; the solver's
  // calls have waited for them already): a queued run is never left behind.
  finish();
  dev_pts_ = dev_proxies_ = nullptr;
  const bool resident = pts_on_device && S != exec::Space::Host;
  if (resident) dev_pts_ = pts;  // the pools copy them from here even when no cluster has a grid
  upload_s = kernel_s = download_s = wait_s = 0;
  double t = wall_seconds();
  // Depths (a child comes after its parent in cluster order), then the grids of each depth.
  const int nc = static_cast<int>(cl.size());
  std::vector<int> depth(nc, 0);
  int maxd = 0;
  for (int c = 0; c < nc; ++c)
    for (int k : cl[c].child)
      if (k >= 0) maxd = std::max(maxd, depth[k] = depth[c] + 1);
  std::vector<std::vector<int>> by(maxd + 1);
  for (int c = 0; c < nc; ++c)
    if (start[c] >= 0) by[depth[c]].push_back(c);
  const int p1 = p + 1, W = 3 * p1, NW = 6 * p1;
  // Each depth's sizes first (grids, chunks, slots, items), so that every buffer is sized before
  // a pass is queued; then its grids, chunks and Chebyshev points (fill), at its offsets.
  std::vector<Level> levels;
  std::vector<const std::vector<int>*> lists;  // per level: its clusters
  std::vector<Piece> pieces;                   // every level's source pieces, level by level
  std::vector<long> slots_of(nc, 0);           // per cluster with a grid: its sources (slots)
  long ng = 0, nh = 0, max_slots = 0, max_parts = 0;
  for (const std::vector<int>& list : by) {
    if (list.empty()) continue;
    Level L{static_cast<int>(ng), 0, static_cast<int>(nh), 0, static_cast<int>(pieces.size()), 0, 0, 0, 0, 0};
    // The pieces over every thread, each a range of the depth's clusters with slots from 0, then
    // placed in cluster order (the same pieces as one loop).
    const int nl = static_cast<int>(list.size());
    const int parts = nl >= 32 && tree_overlap() ? 4 * exec::host_threads() : 1;
    std::vector<std::vector<Piece>> mine(parts);
    std::vector<long> part_slots(parts, 0);
#pragma omp parallel for schedule(static) if (parts > 1)
    for (int q = 0; q < parts; ++q) {
      long slot = 0;
      for (int i = int(long(nl) * q / parts); i < int(long(nl) * (q + 1) / parts); ++i) {
        slots_of[list[i]] = source_pieces(cl, start, count, deg, n, list[i], slot, mine[q]);
        slot += slots_of[list[i]];
      }
      part_slots[q] = slot;
    }
    for (long q = 0, offset = 0; q < parts; offset += part_slots[q++]) {
      for (Piece& x : mine[q]) x.slot += offset;
      pieces.insert(pieces.end(), mine[q].begin(), mine[q].end());
    }
    for (int c : list) {
      const long cs = slots_of[c];
      const long chunks = (cs + kChunk - 1) / kChunk;
      nh += chunks;
      L.parts += 3L * count[c] * chunks;
      L.citems += long(count[c]) * chunks;
      L.slots += cs;
      L.gitems += count[c];
      ++ng;
    }
    L.g1 = static_cast<int>(ng);
    L.h1 = static_cast<int>(nh);
    L.q1 = static_cast<int>(pieces.size());
    max_slots = std::max(max_slots, L.slots);
    max_parts = std::max(max_parts, L.parts);
    levels.push_back(L);
    lists.push_back(&list);
  }
  if (ng == 0) return;
  const long npieces = static_cast<long>(pieces.size());
  // Level li's grids, chunks and per grid its points, then its weights, p + 1 per side (zero
  // beyond its degree), into G, H and nodes at the level's offsets (the points over every thread
  // when `threads`: a few hundred thousand cosines per call).
  const auto fill = [&](size_t li, Grid* G, Chunk* H, Piece* Q, double* nodes, bool threads) {
    const Level& L = levels[li];
    const std::vector<int>& list = *lists[li];
    long slots = 0, parts = 0, citems = 0, gitems = 0;
    int gi = L.g0, hi = L.h0;
    for (int c : list) {
      // (k0: the sources are gathered into the level's slots, so a slot is its own source index)
      Grid g{slots, slots, start[c], gitems, count[c], hi, 0, {0, 0, 0}};
      for (int d = 0; d < 3; ++d) g.dg[d] = deg[3 * size_t(c) + d];
      for (long k = 0; k < slots_of[c]; k += kChunk) {
        const long e = std::min(k + kChunk, slots_of[c]);
        H[hi++] = {gi, slots + k, slots + e, slots + k, parts, citems};
        parts += 3L * g.m;
        citems += g.m;
      }
      g.chunk1 = hi;
      slots += slots_of[c];
      gitems += g.m;
      G[gi++] = g;
    }
    std::copy(pieces.begin() + L.q0, pieces.begin() + L.q1, Q + L.q0);
    const int n0 = L.g0, n1 = L.g1;
#pragma omp parallel for schedule(static) if (threads && n1 - n0 >= 64)
    for (int i = n0; i < n1; ++i) {
      const int c = list[i - n0];
      double* o = nodes + size_t(i) * NW;
      std::fill(o, o + NW, 0.0);
      for (int d = 0; d < 3; ++d) tree::chebyshev(cl[c].lo[d], cl[c].hi[d], G[i].dg[d], o + d * p1, o + W + d * p1);
    }
  };
  const double* P = resident ? pts : place(pts_, S, pts, 6 * size_t(n));
  const double* N = nullptr;
  const Grid* GG = nullptr;
  const Chunk* HH = nullptr;
  // Not waiting (device): the levels' grids, chunks and points in page-locked memory, each
  // level's copied up on the work stream just before its passes, so that the host builds level
  // d + 1 while the device runs level d (the setup was 3–4 ms a call at 1024² with the GPU idle).
  const Piece* QQ = nullptr;
  Grid* Gs = nullptr;
  Chunk* Hs = nullptr;
  Piece* Qs = nullptr;
  double* Ns = nullptr;
  std::vector<Grid> G;  // (on the host the passes read these)
  std::vector<Chunk> H;
  std::vector<Piece> Q;
  std::vector<double> nodes;
  if (wait) {  // every level built, uploaded, then the passes (the sequence before)
    G.resize(ng);
    H.resize(nh);
    Q.resize(npieces);
    nodes.resize(size_t(ng) * NW);
    for (size_t li = 0; li < levels.size(); ++li) fill(li, G.data(), H.data(), Q.data(), nodes.data(), tree_overlap());
    N = place(nodes_, S, nodes.data(), nodes.size());
    GG = place(grids_, S, G.data(), G.size());
    HH = place(chunks_, S, H.data(), H.size());
    QQ = place(pieces_, S, Q.data(), Q.size());
  } else {
    const auto round = [](size_t b) { return (b + 63) / 64 * 64; };
    const size_t gb = round(ng * sizeof(Grid)), hb = round(nh * sizeof(Chunk)), qb = round(npieces * sizeof(Piece));
    const size_t bytes = gb + hb + qb + size_t(ng) * NW * sizeof(double);
    if (stage_.size() < bytes) stage_.reserve(bytes + bytes / 4);  // (no copy of an earlier call is pending)
    Gs = reinterpret_cast<Grid*>(stage_.data());
    Hs = reinterpret_cast<Chunk*>(stage_.data() + gb);
    Qs = reinterpret_cast<Piece*>(stage_.data() + gb + hb);
    Ns = reinterpret_cast<double*>(stage_.data() + gb + hb + qb);
    exec::grow(nodes_, S, size_t(ng) * NW);
    exec::grow(grids_, S, size_t(ng));
    exec::grow(chunks_, S, size_t(nh));
    exec::grow(pieces_, S, size_t(npieces));
    N = nodes_.data();
    GG = grids_.data();
    HH = chunks_.data();
    QQ = pieces_.data();
  }
  exec::grow(table_, S, size_t(max_slots) * W);
  exec::grow(src_, S, size_t(max_slots) * 6);
  exec::grow(part_, S, std::max<size_t>(max_parts, 1));
  double* out = proxies;
  if (S != exec::Space::Host) {
    exec::grow(out_, S, std::max(total, 1L));
    out = out_.data();
  }
  double* T = table_.data();
  double* part = part_.data();
  double* Y = src_.data();  // the level's sources, gathered: [x|y|z|qx|qy|qz], `slots` each
  if (!wait) {  // (the levels' uploads are queued with their passes below)
    if (!clock_) clock_ = exec::make_cuda_event_clock();
    clock_->recycle();
    ev0_ = clock_->record();
  } else {
    exec::fence(S);
  }
  const double t1 = wall_seconds();
  upload_s = t1 - t;
  // Deepest first: a depth's pieces read the proxies of deeper clusters, written before.
  for (size_t li = levels.size(); li-- > 0;) {
    const Level& L = levels[li];
    const int g0 = L.g0, g1 = L.g1, h0 = L.h0, h1 = L.h1, q0 = L.q0, q1 = L.q1;
    if (!wait) {  // this level's grids, chunks and points: built, then queued up before its passes
      fill(li, Gs, Hs, Qs, Ns, true);
      exec::copy_async(grids_.data() + g0, S, Gs + g0, exec::Space::Host, size_t(g1 - g0));
      exec::copy_async(chunks_.data() + h0, S, Hs + h0, exec::Space::Host, size_t(h1 - h0));
      exec::copy_async(pieces_.data() + q0, S, Qs + q0, exec::Space::Host, size_t(q1 - q0));
      exec::copy_async(nodes_.data() + size_t(g0) * NW, S, Ns + size_t(g0) * NW, exec::Space::Host,
                       size_t(g1 - g0) * NW);
    }
    const long gitems = L.gitems, slots = L.slots;
    // (0) The depth's sources gathered from their pieces: point sources, or deeper proxies.
    exec::parallel_for(S, L.slots, [=] BEATNIK_HOST_DEVICE(long i) {
      const Piece& q = QQ[exec::last_at_most(QQ, q0, q1, i, &Piece::slot)];
      const double* from = (q.proxies ? out : P) + q.off + (i - q.slot);
      for (int d = 0; d < 6; ++d) Y[d * slots + i] = from[d * q.stride];
    });
    // (1) Lagrange values of every source of the depth on its cluster's grid.
    exec::parallel_for(S, L.slots, [=] BEATNIK_HOST_DEVICE(long i) {
      const int lo = exec::last_at_most(GG, g0, g1, i, &Grid::slot);
      const Grid& g = GG[lo];
      const long k = g.k0 + (i - g.slot);
      const double* nd = N + size_t(lo) * NW;
      // Into a local array, then stored once: lagrange() writing the table itself stored, reloaded
      // and divided every value in global memory, each store a possible alias of the nodes it
      // reads next (the pass took 1.1 ms a depth at 1024², 7 % of the SMs' issue rate, ncu).
      // The table is by column (value j of side d of every slot together: T[(d·(p+1) + j)·slots
      // + slot]), so a warp's stores are coalesced; by row each store touched 32 sectors.
      double v[tree::kTreeMaxDegree + 1];
      for (int d = 0; d < 3; ++d) {
        tree::lagrange(Y[d * slots + k], g.dg[d], nd + d * p1, nd + W + d * p1, v);
        double* t = T + size_t(d * p1) * slots + i;
        for (int j = 0; j <= g.dg[d]; ++j) t[j * slots] = v[j];
      }
    });
    // (2) Per chunk and proxy: Σ over the chunk's sources, in order (device: chunk_sums_kernel,
    // the same sums).
#if defined(BEATNIK_DEVICE_COMPILE)
    if (S == exec::Space::Device) {
      if (h1 > h0) {
        const size_t sh = (size_t(kChunkSrc) * W + 3 * kChunkSrc) * sizeof(double);
        chunk_sums_kernel<<<static_cast<unsigned>(h1 - h0), kChunkThreads, sh, exec::detail::stream()>>>(
            HH, h0, GG, T, slots, Y, slots, p1, part);
        exec::detail::check_launch("tree upward pass 2 (chunk sums)");
      }
    } else
#endif
    exec::parallel_for(S, L.citems, [=] BEATNIK_HOST_DEVICE(long i) {
      const int lo = exec::last_at_most(HH, h0, h1, i, &Chunk::item);
      const Chunk& h = HH[lo];
      const Grid& g = GG[h.grid];
      const int idx = static_cast<int>(i - h.item), n1 = g.dg[1] + 1, n2 = g.dg[2] + 1;
      const int a = idx / (n1 * n2), b = (idx / n2) % n1, e = idx % n2;
      double s0 = 0.0, s1 = 0.0, s2 = 0.0;
      for (long r = h.slot0; r < h.slot1; ++r) {
        const double* Lr = T + r;  // the slot's column entries, `slots` apart
        const long k = h.k0 + (r - h.slot0);
        const double f = Lr[a * slots] * Lr[(p1 + b) * slots] * Lr[(2 * p1 + e) * slots];
        s0 += f * Y[3 * slots + k];
        s1 += f * Y[4 * slots + k];
        s2 += f * Y[5 * slots + k];
      }
      double* o = part + h.part;
      o[idx] = s0;
      o[g.m + idx] = s1;
      o[2 * g.m + idx] = s2;
    });
    // (3) Per proxy: its point, and its chunks summed in chunk order.
    exec::parallel_for(S, gitems, [=] BEATNIK_HOST_DEVICE(long i) {
      const int lo = exec::last_at_most(GG, g0, g1, i, &Grid::item);
      const Grid& g = GG[lo];
      const int m = g.m, idx = static_cast<int>(i - g.item), n1 = g.dg[1] + 1, n2 = g.dg[2] + 1;
      const int a = idx / (n1 * n2), b = (idx / n2) % n1, e = idx % n2;
      const double* nd = N + size_t(lo) * NW;
      double* o = out + g.out;
      o[idx] = nd[a];
      o[m + idx] = nd[p1 + b];
      o[2 * m + idx] = nd[2 * p1 + e];
      // A grid's chunks are consecutive, 3·m partial sums apart: the three sums in one loop whose
      // loads depend on nothing summed (near the root a proxy has thousands of chunks and few
      // proxies run at once, so a chain of dependent loads per chunk was the pass's time).
      const double* q = part + HH[g.chunk0].part + idx;
      const long stride = 3L * m;
      double v0 = 0.0, v1 = 0.0, v2 = 0.0;
      UPWARD_UNROLL
      for (int h = g.chunk0; h < g.chunk1; ++h, q += stride) {
        v0 += q[0];
        v1 += q[m];
        v2 += q[2 * m];
      }
      o[3 * m + idx] = v0;
      o[4 * m + idx] = v1;
      o[5 * m + idx] = v2;
    });
  }
  if (!wait) {  // the passes' events; finish() reads them (and makes the download)
    ev1_ = clock_->record();
    upload_s = wall_seconds() - t;  // the host's setup, interleaved with the queueing
    pending_ = true;
    download_ = download;
    proxies_host_ = proxies;
    total_ = total;
    dev_pts_ = P;
    dev_proxies_ = out;
    return;
  }
  exec::fence(S);
  const double t2 = wall_seconds();
  kernel_s = t2 - t1;
  if (S != exec::Space::Host) {
    dev_pts_ = P;
    dev_proxies_ = out;
    if (download) exec::copy(proxies, exec::Space::Host, out, S, total);
  }
  download_s = wall_seconds() - t2;
}

void TreeUpward::finish() {
  if (!pending_) return;
  pending_ = false;
  const double t = wall_seconds();
  kernel_s = clock_->seconds_between(ev0_, ev1_);  // (waits for the second event: the passes' end)
  const double t2 = wall_seconds();
  wait_s = t2 - t;
  if (download_) exec::copy(proxies_host_, exec::Space::Host, dev_proxies_, space_, total_);
  download_s = wall_seconds() - t2;
}

}  // namespace beatnik::model
