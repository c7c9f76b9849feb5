// The host kernels of the exact Birkhoff–Rott block (br_host_kernel.hpp): every kernel this CPU
// supports against a serial sum written here (the image window from image_centre, the pair
// formula in long double), on random sheets and on adversarial inputs: sources exactly on and
// one ulp either side of the image-window jumps, near-coincident pairs (d far below the float
// range of the AVX2 estimate), pairs beyond the float range (non-periodic, 1e20 apart), d = 0
// (NaN in every path), source counts that are not a multiple of the vector width, partial
// target ranges. A kernel this CPU lacks must be refused (NotAvailable), not run. The tree
// solver's kernel (br_targets_host: targets against a list of source ranges, some with the image
// window's test) against the same kind of serial sum, with target counts around the vector widths;
// the AVX2 kernels' unchecked path (coordinates that rule out d beyond the float range) against
// their checked one, bit for bit; and the edge sums' pair loops (tree_edge_pairs.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/model/br_host_kernel.hpp"
#include "beatnik/model/br_targets_host.hpp"
#include "beatnik/model/tree_edge_pairs.hpp"

using namespace beatnik;
using model::BRHostKernel;

namespace {

struct Problem {
  std::vector<double> tgt, src;  // [x|y|z], [x|y|z|qx|qy|qz]
  long nt = 0, ns = 0, t0 = 0, t1 = 0;
  model::BRImages images;
  double eps = 0.0;
};

// The serial sum and, per component, the sum of the magnitudes of its terms (the scale of its
// round-off).
void reference(const Problem& p, std::vector<double>& u, std::vector<double>& scale) {
  u.assign(3 * p.nt, 0.0);
  scale.assign(3 * p.nt, 0.0);
  const model::BRImages& im = p.images;
  for (long t = p.t0; t < p.t1; ++t) {
    const double tx = p.tgt[t], ty = p.tgt[p.nt + t], tz = p.tgt[2 * p.nt + t];
    long double s[3] = {0, 0, 0}, m[3] = {0, 0, 0};
    for (long k = 0; k < p.ns; ++k) {
      const double x = p.src[k], y = p.src[p.ns + k], z = p.src[2 * p.ns + k];
      const long double q[3] = {p.src[3 * p.ns + k], p.src[4 * p.ns + k], p.src[5 * p.ns + k]};
      const double cxs = model::image_centre(tx - x, im.period[0], im.centring_half(0));
      const double cys = model::image_centre(ty - y, im.period[1], im.centring_half(1));
      for (int a = 0; a < im.count(0); ++a)
        for (int b = 0; b < im.count(1); ++b) {
          const long double r[3] = {(long double)tx - ((long double)x + cxs + im.offset(0, a)),
                                    (long double)ty - ((long double)y + cys + im.offset(1, b)),
                                    (long double)tz - z};
          const long double d = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + p.eps;
          const long double f = 1.0L / (d * std::sqrt(d));
          const long double c[3] = {q[1] * r[2] - q[2] * r[1], q[2] * r[0] - q[0] * r[2], q[0] * r[1] - q[1] * r[0]};
          for (int i = 0; i < 3; ++i) {
            s[i] += c[i] * f;
            m[i] += (std::fabs(q[(i + 1) % 3] * r[(i + 2) % 3]) + std::fabs(q[(i + 2) % 3] * r[(i + 1) % 3])) * f;
          }
        }
    }
    for (int i = 0; i < 3; ++i) {
      u[i * p.nt + t] = static_cast<double>(s[i]);
      scale[i * p.nt + t] = static_cast<double>(m[i]);
    }
  }
}

std::vector<double> run(const Problem& p, BRHostKernel k) {
  std::vector<double> acc(3 * p.nt, 0.0);
  model::BRBlockArgs a;
  a.targets = p.tgt.data();
  a.nt = p.nt;
  a.t0 = p.t0;
  a.t1 = p.t1;
  a.sources = p.src.data();
  a.ns = p.ns;
  a.images = p.images;
  a.eps = p.eps;
  a.acc = acc.data();
  model::br_block_host(a, k);
  return acc;
}

// Every supported kernel within tol·scale of the reference, target by target (NaN where the
// reference is NaN).
void expect_all_kernels_match(const Problem& p, const std::string& what, double tol = 1e-13) {
  std::vector<double> ref, scale;
  reference(p, ref, scale);
  for (BRHostKernel k : model::br_host_kernels_supported()) {
    const std::vector<double> u = run(p, k);
    int bad = 0;
    for (long i = 0; i < 3 * p.nt && bad < 5; ++i) {
      const bool ok = std::isnan(ref[i]) ? std::isnan(u[i]) : std::fabs(u[i] - ref[i]) <= tol * scale[i];
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << what << ", kernel " << model::to_string(k) << ", entry " << i << ": " << u[i]
                      << " against " << ref[i] << " (scale " << scale[i] << ")";
    }
  }
}

Problem random_sheet(long nt, long ns, bool centred, int K, double eps, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> xy(-1.0, 1.0), z(-0.3, 0.3), q(-1e-3, 1e-3);
  Problem p;
  p.nt = nt, p.ns = ns, p.t0 = 0, p.t1 = nt;
  p.tgt.resize(3 * nt);
  p.src.resize(6 * ns);
  for (long i = 0; i < nt; ++i) p.tgt[i] = xy(g), p.tgt[nt + i] = xy(g), p.tgt[2 * nt + i] = z(g);
  for (long k = 0; k < ns; ++k) {
    p.src[k] = xy(g), p.src[ns + k] = xy(g), p.src[2 * ns + k] = z(g);
    for (int c = 3; c < 6; ++c) p.src[c * ns + k] = q(g);
  }
  p.images.k = K;
  p.images.centred = centred;
  p.images.period[0] = p.images.period[1] = 2.0;
  p.eps = eps;
  return p;
}

TEST(BRHostKernels, TheDefaultIsSupportedAndUnsupportedOnesAreRefused) {
  const auto ks = model::br_host_kernels_supported();
  std::string names;
  for (BRHostKernel k : ks) names += std::string(" ") + model::to_string(k);
  std::printf("kernels tested on this CPU:%s; default %s\n", names.c_str(), model::to_string(model::br_host_kernel_default()));
  ASSERT_GE(ks.size(), 2u);  // scalar and portable always
  EXPECT_TRUE(model::br_host_kernel_supported(model::br_host_kernel_default()));
  Problem p = random_sheet(4, 4, true, 1, 1e-3, 1);
  for (BRHostKernel k : {BRHostKernel::Avx2, BRHostKernel::Avx512})
    if (!model::br_host_kernel_supported(k)) EXPECT_THROW(run(p, k), NotAvailable) << model::to_string(k);
}

TEST(BRHostKernels, RandomSheetsEveryImageRule) {
  // Sources not a multiple of 4 or 8 and more than one 512-source tile; a partial target range.
  for (bool centred : {true, false})
    for (int K : {0, 1, 2}) {
      Problem p = random_sheet(37, 1031, centred, K, 1e-3, 17 + K);
      p.t0 = 3, p.t1 = 35;
      expect_all_kernels_match(p, "random, centred " + std::to_string(centred) + ", K " + std::to_string(K));
    }
  // One periodic dimension and one free one.
  Problem p = random_sheet(20, 203, true, 1, 4e-4, 5);
  p.images.period[1] = 0.0;
  expect_all_kernels_match(p, "periodic x, free y");
}

TEST(BRHostKernels, SourcesOnTheImageWindowEdges) {
  // L = 2: the window jumps where (tx − sx) + 2⁻²⁰·L crosses ±L/2. Sources exactly there and
  // one ulp either side, in x, in y and in both (every difference below is exact).
  Problem p;
  const double tx = 0.25, ty = -0.375, jump = 1.0 - 0x1p-19;
  std::vector<double> xs, ys;
  for (double base : {tx - jump, tx + jump})
    for (double s : {std::nextafter(base, -2.0), base, std::nextafter(base, 2.0)}) {
      xs.push_back(s), ys.push_back(0.1);
      xs.push_back(-0.2), ys.push_back(s - tx + ty);
      xs.push_back(s), ys.push_back(s - tx + ty);
    }
  p.ns = static_cast<long>(xs.size());
  p.src.assign(6 * p.ns, 0.0);
  for (long k = 0; k < p.ns; ++k) {
    p.src[k] = xs[k], p.src[p.ns + k] = ys[k], p.src[2 * p.ns + k] = 0.01 * k;
    p.src[3 * p.ns + k] = 1e-3, p.src[4 * p.ns + k] = -2e-3 + 1e-4 * k, p.src[5 * p.ns + k] = 5e-4;
  }
  p.nt = 1, p.t0 = 0, p.t1 = 1;
  p.tgt = {tx, ty, 0.05};
  p.images.k = 1;
  p.images.centred = true;
  p.images.period[0] = p.images.period[1] = 2.0;
  p.eps = 1e-3;
  expect_all_kernels_match(p, "window edges");
}

TEST(BRHostKernels, NearCoincidentAndFarPairs) {
  // A target with sources δ away (d = 2.25δ² from 1e-16 down to 1e-50: the last ones below
  // the float range, handled by the fallback), ε tiny or 0.
  for (double eps : {1e-30, 0.0}) {
    Problem p;
    const std::vector<double> deltas{1e-8, 1e-12, 1e-15, 1e-18, 1e-21, 1e-25, 0.3, 0.7};
    p.ns = static_cast<long>(deltas.size());
    p.src.assign(6 * p.ns, 0.0);
    for (long k = 0; k < p.ns; ++k) {
      p.src[k] = deltas[k], p.src[p.ns + k] = -0.5 * deltas[k], p.src[2 * p.ns + k] = deltas[k];
      p.src[3 * p.ns + k] = 1e-3, p.src[4 * p.ns + k] = 2e-3, p.src[5 * p.ns + k] = -1e-3;
    }
    p.nt = 1, p.t0 = 0, p.t1 = 1;
    p.tgt = {0.0, 0.0, 0.0};  // at the origin, so that the tiny differences are exact
    p.images.k = 1;
    p.images.period[0] = p.images.period[1] = 2.0;
    p.eps = eps;
    expect_all_kernels_match(p, "near-coincident, eps " + std::to_string(eps));
  }
  // Free dimensions, sources 1e20 away (d beyond the float range) beside ordinary ones.
  Problem far = random_sheet(9, 13, true, 1, 1e-3, 3);
  far.images.period[0] = far.images.period[1] = 0.0;
  far.src[0] = 1e20, far.src[far.ns + 5] = -3e19;
  expect_all_kernels_match(far, "far sources");
  // d = 0 (a target on a source, ε = 0): 0·∞ = NaN in br_pair, and in every kernel.
  Problem zero = random_sheet(6, 8, true, 1, 0.0, 4);
  for (int c = 0; c < 3; ++c) zero.tgt[c * zero.nt + 2] = zero.src[c * zero.ns + 5];
  expect_all_kernels_match(zero, "d = 0");
}


// The tree solver's kernel (br_targets_host): the serial long-double sum of the pairs the ranges
// take (a windowed range only those with |m − a₀(t − s)| ≤ K) and its scale; returns their count.
long targets_reference(const Problem& p, const std::vector<model::BRSourceRange>& ranges, std::vector<double>& ref,
                       std::vector<double>& scale) {
  const long nt = p.nt;
  const model::BRImages& im = p.images;
  ref.assign(3 * nt, 0.0);
  scale.assign(3 * nt, 0.0);
  long pairs = 0;
  for (long t = 0; t < nt; ++t) {
    const double tx = p.tgt[t], ty = p.tgt[nt + t], tz = p.tgt[2 * nt + t];
    long double sum[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
    for (const auto& r : ranges)
      for (long k = r.k0; k < r.k1; ++k) {
        const double* b = r.p;
        const double x = b[k], y = b[r.stride + k], z = b[2 * r.stride + k];
        const double cx = model::image_centre(tx - x, im.period[0], im.centring_half(0));
        const double cy = model::image_centre(ty - y, im.period[1], im.centring_half(1));
        const int a0x = cx == 0.0 ? 0 : int(cx / im.period[0]), a0y = cy == 0.0 ? 0 : int(cy / im.period[1]);
        if (r.window && (std::abs(r.mx - a0x) > im.k || std::abs(r.my - a0y) > im.k)) continue;
        ++pairs;
        const long double q[3] = {b[3 * r.stride + k], b[4 * r.stride + k], b[5 * r.stride + k]};
        const long double rr[3] = {(long double)tx - ((long double)x + r.mx * im.period[0]),
                                   (long double)ty - ((long double)y + r.my * im.period[1]), (long double)tz - z};
        const long double d = rr[0] * rr[0] + rr[1] * rr[1] + rr[2] * rr[2] + p.eps;
        const long double f = 1.0L / (d * std::sqrt(d));
        for (int i = 0; i < 3; ++i) {
          const long double a = q[(i + 1) % 3] * rr[(i + 2) % 3], c = q[(i + 2) % 3] * rr[(i + 1) % 3];
          sum[i] += (a - c) * f;
          mag[i] += (std::fabs(a) + std::fabs(c)) * f;
        }
      }
    for (int i = 0; i < 3; ++i) ref[i * nt + t] = double(sum[i]), scale[i * nt + t] = double(mag[i]);
  }
  return pairs;
}

// Every supported kernel's br_targets_host within 1e-13·scale of the reference (NaN where it is
// NaN) and its pair count equal to the pairs taken. Returns the kernels run.
std::vector<BRHostKernel> expect_targets_match(const Problem& p, const std::vector<model::BRSourceRange>& ranges,
                                               const std::string& what) {
  std::vector<double> ref, scale;
  const long want_pairs = targets_reference(p, ranges, ref, scale);
  const long nt = p.nt;
  std::vector<BRHostKernel> ran;
  for (BRHostKernel k : model::br_host_kernels_supported()) {
    std::vector<double> u(3 * nt, 0.0);
    const long pairs = model::br_targets_host(p.tgt.data(), p.tgt.data() + nt, p.tgt.data() + 2 * nt, nt,
                                              ranges.data(), int(ranges.size()), p.images, p.eps, u.data(),
                                              u.data() + nt, u.data() + 2 * nt, k);
    const std::string name = what + ", kernel " + model::to_string(k);
    EXPECT_EQ(pairs, want_pairs) << name;
    int bad = 0;
    for (long i = 0; i < 3 * nt && bad < 5; ++i) {
      const bool ok = std::isnan(ref[i]) ? std::isnan(u[i]) : std::fabs(u[i] - ref[i]) <= 1e-13 * scale[i];
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << name << ", entry " << i << ": " << u[i] << " against " << ref[i] << " (scale " << scale[i]
                      << ")";
    }
    ran.push_back(k);
  }
  return ran;
}

// The kernels this CPU must run: AVX2 + FMA and AVX-512 where cpuid has them (not skipped).
void expect_every_simd_kernel_ran(const std::vector<BRHostKernel>& ran) {
  auto has = [&](BRHostKernel k) { return std::find(ran.begin(), ran.end(), k) != ran.end(); };
  EXPECT_TRUE(has(BRHostKernel::Scalar) && has(BRHostKernel::Portable));
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) EXPECT_TRUE(has(BRHostKernel::Avx2));
  if (__builtin_cpu_supports("avx512f")) EXPECT_TRUE(has(BRHostKernel::Avx512));
}

// Ranges of two source blocks with image shifts, some windowed, against the serial sum; targets
// 1..20 (every vector tail of 4- and 8-lane kernels and 1–4 vectors per pass), 33 and 64 (a
// batch of the default leaf size: several passes).
TEST(BRHostKernels, TargetsAgainstSourceRangesWithWindows) {
  std::vector<long> counts;
  for (long nt = 1; nt <= 20; ++nt) counts.push_back(nt);
  counts.push_back(33);
  counts.push_back(64);
  for (bool centred : {true, false})
    for (long nt : counts) {
      Problem p = random_sheet(nt, 97, centred, 1, 1e-3, 31 + nt);
      // Sources spread over 2.5 periods in x so that the nearest image differs within a range.
      for (long k = 0; k < p.ns; ++k) p.src[k] *= 2.5;
      std::vector<double> proxies(6 * 10);
      for (int c = 0; c < 6; ++c)
        for (int k = 0; k < 10; ++k) proxies[c * 10 + k] = p.src[c * p.ns + 3 * k] * (c < 3 ? 1.1 : 0.7);
      const std::vector<model::BRSourceRange> ranges{
          {p.src.data(), p.ns, 0, 40, 0, 0, false},  {p.src.data(), p.ns, 40, 97, 1, -1, true},
          {proxies.data(), 10, 0, 10, -1, 2, false}, {p.src.data(), p.ns, 5, 60, 2, 0, true},
          {p.src.data(), p.ns, 0, 97, -2, -2, true}, {p.src.data(), p.ns, 60, 61, 0, 1, false}};
      const auto ran = expect_targets_match(p, ranges, "centred " + std::to_string(centred) + ", targets " +
                                                           std::to_string(nt));
      expect_every_simd_kernel_ran(ran);
    }
}

// Pairs outside the float range of the AVX2 estimate (d far below FLT_MIN with ε tiny or 0; d
// beyond FLT_MAX on free dimensions) beside ordinary ones, and d = 0 (NaN in every kernel), in
// plain and windowed ranges, tails included.
TEST(BRHostKernels, TargetsOutsideTheFloatRange) {
  for (double eps : {1e-30, 0.0})
    for (long nt : {3L, 6L, 17L}) {
      Problem p = random_sheet(nt, 24, true, 1, eps, 7 + nt);
      // Sources δ from target 1 (d = 2.25δ² down to ~1e-50); target 0 at the origin beside them.
      const std::vector<double> deltas{1e-8, 1e-15, 1e-21, 1e-25};
      for (int c = 0; c < 3; ++c) p.tgt[c * nt + 1] = 0.0;
      for (size_t i = 0; i < deltas.size(); ++i) {
        const long k = 3 + 5 * long(i);
        p.src[k] = deltas[i], p.src[p.ns + k] = -0.5 * deltas[i], p.src[2 * p.ns + k] = deltas[i];
      }
      const std::vector<model::BRSourceRange> ranges{{p.src.data(), p.ns, 0, 24, 0, 0, false},
                                                     {p.src.data(), p.ns, 2, 20, 0, 0, true},
                                                     {p.src.data(), p.ns, 0, 24, 1, -1, true}};
      expect_targets_match(p, ranges,
                           "near-coincident, eps " + std::to_string(eps) + ", targets " + std::to_string(nt));
    }
  // Free dimensions, sources 1e20 away (d beyond the float range).
  Problem far = random_sheet(13, 17, true, 1, 1e-3, 3);
  far.images.period[0] = far.images.period[1] = 0.0;
  far.src[0] = 1e20, far.src[far.ns + 5] = -3e19;
  expect_targets_match(far, {{far.src.data(), far.ns, 0, 17, 0, 0, false}, {far.src.data(), far.ns, 0, 9, 0, 0, true}},
                       "far sources");
  // d = 0: a target on a source with ε = 0.
  Problem zero = random_sheet(6, 8, true, 1, 0.0, 4);
  for (int c = 0; c < 3; ++c) zero.tgt[c * zero.nt + 2] = zero.src[c * zero.ns + 5];
  expect_targets_match(zero, {{zero.src.data(), zero.ns, 0, 8, 0, 0, false}}, "d = 0");
}

// The AVX2 kernels skip the per-pair range check where the coordinates vouch for every pair
// (pairs_in_float_range): that path must give the same bits as the checked one. One target 1e20
// away, appended, turns the check on for the whole call (and that target's pairs are redone by
// the safe path); every other target's sums must not change by a bit. Exact block and tree kernel.
TEST(BRHostKernels, Avx2RangeCheckChangesNoBits) {
  if (!model::br_host_kernel_supported(BRHostKernel::Avx2)) GTEST_SKIP() << "this CPU lacks AVX2 + FMA";
  for (bool centred : {true, false}) {
    Problem p = random_sheet(21, 37, centred, 1, 1e-3, 91);
    for (long k = 0; k < p.ns; ++k) p.src[k] *= 2.5;  // nearest images differ within the block
    Problem q = p;                                     // the same targets and one 1e20 away
    q.nt = q.t1 = p.nt + 1;
    q.tgt.clear();
    for (int c = 0; c < 3; ++c) {
      q.tgt.insert(q.tgt.end(), p.tgt.begin() + c * p.nt, p.tgt.begin() + (c + 1) * p.nt);
      q.tgt.push_back(c == 0 ? 1e20 : 0.5);
    }
    const std::vector<double> a = run(p, BRHostKernel::Avx2), b = run(q, BRHostKernel::Avx2);
    for (int c = 0; c < 3; ++c)
      for (long t = 0; t < p.nt; ++t)
        EXPECT_EQ(a[c * p.nt + t], b[c * q.nt + t]) << "exact block, centred " << centred << ", target " << t;
    const std::vector<model::BRSourceRange> ranges{{p.src.data(), p.ns, 0, 20, 0, 0, false},
                                                   {p.src.data(), p.ns, 10, 37, 1, -1, true},
                                                   {p.src.data(), p.ns, 0, 37, -1, 0, false}};
    std::vector<double> u(3 * p.nt, 0.0), v(3 * q.nt, 0.0);
    model::br_targets_host(p.tgt.data(), p.tgt.data() + p.nt, p.tgt.data() + 2 * p.nt, p.nt, ranges.data(), 3,
                           p.images, p.eps, u.data(), u.data() + p.nt, u.data() + 2 * p.nt, BRHostKernel::Avx2);
    model::br_targets_host(q.tgt.data(), q.tgt.data() + q.nt, q.tgt.data() + 2 * q.nt, q.nt, ranges.data(), 3,
                           q.images, q.eps, v.data(), v.data() + q.nt, v.data() + 2 * q.nt, BRHostKernel::Avx2);
    for (int c = 0; c < 3; ++c)
      for (long t = 0; t < p.nt; ++t)
        EXPECT_EQ(u[c * p.nt + t], v[c * q.nt + t]) << "tree kernel, centred " << centred << ", target " << t;
  }
}

// The edge sums' pair loops (model/tree_edge_pairs.hpp: one target against points with
// strengths a or a − b, e.g. a prefix difference of proxy strengths), portable, AVX2 + FMA and
// AVX-512F where this CPU has them, against a serial long-double sum: point counts 1..13 from offsets 0..3
// (every vector tail), d outside the float range (ε = 0 beside near-coincident points, points
// 1e20 away) and d = 0 (NaN).
TEST(BRHostKernels, EdgePairLoops) {
  struct Fn {
    const char* name;
    model::tree::detail::EdgePairsFn f;
  };
  std::vector<Fn> fns{{"portable", model::tree::detail::edge_pairs_portable}};
  if (model::br_host_kernel_supported(BRHostKernel::Avx2))
    fns.push_back({"avx2", model::tree::detail::edge_pairs_avx2});
  EXPECT_EQ(fns.size() == 2, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  if (model::br_host_kernel_supported(BRHostKernel::Avx512))
    fns.push_back({"avx512", model::tree::detail::edge_pairs_avx512});
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const long n = 16;
  for (int variant = 0; variant < 4; ++variant)  // plain, near-coincident (ε = 0), far, d = 0
    for (bool diff : {false, true})
      for (long k0 = 0; k0 < 4; ++k0)
        for (long k1 = k0 + 1; k1 <= k0 + 13; ++k1) {
          std::vector<double> p(3 * n), a(3 * n), b(3 * n);
          for (auto& x : p) x = u(g);
          for (auto& x : a) x = 1e-3 * u(g);
          for (auto& x : b) x = 1e-3 * u(g);
          double ox = 2.0, oy = -2.0, x = u(g), y = u(g), z = 0.1 * u(g), eps = 1e-3;
          if (variant == 1 || variant == 3) {  // the target at the origin, no offset: exact differences
            ox = oy = x = y = z = eps = 0.0;
            const double delta = variant == 1 ? 1e-21 : 0.0;  // d = 2.25δ² below FLT_MIN, or d = 0
            p[k0] = delta, p[n + k0] = -0.5 * delta, p[2 * n + k0] = delta;
          } else if (variant == 2) {
            p[k1 - 1] = 1e20;
          }
          long double sum[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
          for (long k = k0; k < k1; ++k) {
            const long double q[3] = {a[k] - (diff ? b[k] : 0.0), a[n + k] - (diff ? b[n + k] : 0.0),
                                      a[2 * n + k] - (diff ? b[2 * n + k] : 0.0)};
            const long double r[3] = {(long double)x - (p[k] + ox), (long double)y - (p[n + k] + oy),
                                      (long double)z - p[2 * n + k]};
            const long double d = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps;
            const long double f = 1.0L / (d * std::sqrt(d));
            for (int i = 0; i < 3; ++i) {
              const long double s1 = q[(i + 1) % 3] * r[(i + 2) % 3], s2 = q[(i + 2) % 3] * r[(i + 1) % 3];
              sum[i] += (s1 - s2) * f;
              mag[i] += (std::fabs(s1) + std::fabs(s2)) * f;
            }
          }
          for (const Fn& fn : fns) {
            double v[3] = {0.0, 0.0, 0.0};
            fn.f(p.data(), p.data() + n, p.data() + 2 * n, a.data(), diff ? b.data() : nullptr, n, k0, k1, ox, oy, x,
                 y, z, eps, v);
            for (int i = 0; i < 3; ++i) {
              const double ref = double(sum[i]);
              const bool ok = std::isnan(ref) ? std::isnan(v[i]) : std::fabs(v[i] - ref) <= 1e-13 * double(mag[i]);
              EXPECT_TRUE(ok) << fn.name << ", variant " << variant << ", diff " << diff << ", [" << k0 << ", " << k1
                              << "), component " << i << ": " << v[i] << " against " << ref;
            }
          }
        }
}

// The shared-rows groups' loop (edge_targets_avx512: several targets against one set of points,
// 4 targets per pass): every target's sum against a serial long-double one, for point counts
// around the vector width and 1–9 targets (every pass width), and equal to the one-target loop
// with the same strengths to round-off.
TEST(BRHostKernels, EdgeTargetsLoop) {
  if (!model::br_host_kernel_supported(BRHostKernel::Avx512)) GTEST_SKIP() << "no AVX-512F";
  std::mt19937_64 g(12);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (long m : {1L, 7L, 8L, 9L, 17L, 81L})
    for (long nt = 1; nt <= 9; ++nt) {
      std::vector<double> p(3 * m), q(3 * m), t(3 * nt), v(3 * nt, -1.0);
      for (auto& x : p) x = u(g);
      for (auto& x : q) x = 1e-3 * u(g);
      for (auto& x : t) x = u(g);
      const double ox = 2.0, oy = -2.0, eps = 1e-3;
      model::tree::detail::edge_targets_avx512(p.data(), p.data() + m, p.data() + 2 * m, q.data(), m, m, ox, oy,
                                               t.data(), t.data() + nt, t.data() + 2 * nt, nt, eps, v.data(),
                                               v.data() + nt, v.data() + 2 * nt);
      for (long i = 0; i < nt; ++i) {
        long double sum[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
        for (long k = 0; k < m; ++k) {
          const long double r[3] = {(long double)t[i] - (p[k] + ox), (long double)t[nt + i] - (p[m + k] + oy),
                                    (long double)t[2 * nt + i] - p[2 * m + k]};
          const long double qq[3] = {q[k], q[m + k], q[2 * m + k]};
          const long double d = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps;
          const long double f = 1.0L / (d * std::sqrt(d));
          for (int c = 0; c < 3; ++c) {
            const long double s1 = qq[(c + 1) % 3] * r[(c + 2) % 3], s2 = qq[(c + 2) % 3] * r[(c + 1) % 3];
            sum[c] += (s1 - s2) * f;
            mag[c] += (std::fabs(s1) + std::fabs(s2)) * f;
          }
        }
        double one[3] = {0.0, 0.0, 0.0};
        model::tree::detail::edge_pairs_avx512(p.data(), p.data() + m, p.data() + 2 * m, q.data(), nullptr, m, 0, m,
                                               ox, oy, t[i], t[nt + i], t[2 * nt + i], eps, one);
        for (int c = 0; c < 3; ++c) {
          EXPECT_LE(std::fabs(v[c * nt + i] - double(sum[c])), 1e-13 * double(mag[c]))
              << "m " << m << ", nt " << nt << ", target " << i << ", component " << c;
          EXPECT_LE(std::fabs(v[c * nt + i] - one[c]), 1e-14 * double(mag[c]))
              << "m " << m << ", nt " << nt << ", target " << i << ", component " << c << " against one target";
        }
      }
    }
}

}  // namespace
