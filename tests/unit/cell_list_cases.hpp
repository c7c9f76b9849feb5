#pragma once
// Point sets and brute-force references shared by the cell-list tests on the host
// (test_cell_list.cpp) and the device (test_cell_list_device.cpp).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "beatnik/model/br_cutoff_block.hpp"
#include "beatnik/model/br_kernel.hpp"

namespace beatnik::test {

struct Points {
  std::string name;
  std::vector<double> x, y, z;
  long size() const { return long(x.size()); }
  void add(double a, double b, double c) {
    x.push_back(a);
    y.push_back(b);
    z.push_back(c);
  }
};

// A wavy sheet with random jitter (the solver's usual input), a tight cluster with far
// outliers, a plane z = 0, identical points, a single point, none, a lattice whose spacing is
// exactly the radius (pairs at exactly the cutoff distance), a box so large that max_cells
// caps the grid, and (for radius 1/8) a pair 1e-9 beyond the radius that the float32 test
// accepts, placed so that cells exactly `radius` wide would put it two cells apart.
inline std::vector<Points> point_sets(double radius) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Points> sets;
  Points sheet{"sheet"};
  for (int k = 0; k < 3000; ++k) {
    const double a = u(rng), b = u(rng);
    sheet.add(a, 0.7 * b, 0.1 * std::cos(3 * a) * std::sin(2 * b) + 0.01 * u(rng));
  }
  sets.push_back(sheet);
  Points cluster{"cluster"};
  for (int k = 0; k < 1500; ++k) cluster.add(0.3 + 0.05 * g(rng), -0.2 + 0.05 * g(rng), 0.05 * g(rng));
  for (int k = 0; k < 20; ++k) cluster.add(5 * u(rng), 5 * u(rng), 40 * u(rng));
  sets.push_back(cluster);
  Points plane{"plane"};
  for (int k = 0; k < 1000; ++k) plane.add(u(rng), u(rng), 0.0);
  sets.push_back(plane);
  Points same{"identical"};
  for (int k = 0; k < 50; ++k) same.add(0.25, -0.5, 1.0);
  sets.push_back(same);
  Points one{"single"};
  one.add(1.0, 2.0, 3.0);
  sets.push_back(one);
  sets.push_back(Points{"empty"});
  Points lattice{"lattice"};
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j)
      for (int k = 0; k < 3; ++k) lattice.add(-0.5 + i * radius, 0.25 + j * radius, k * radius);
  sets.push_back(lattice);
  Points big{"big box"};
  for (int k = 0; k < 2000; ++k) big.add(100 * u(rng), 100 * u(rng), 100 * u(rng));
  sets.push_back(big);
  Points edge{"float32 edge"};
  edge.add(0.0, 0.0, 0.0);
  edge.add(8 * radius, 0.0, 0.0);
  edge.add(radius - 1e-10, 0.0, 0.0);
  edge.add(2 * radius + 9e-10, 0.0, 0.0);
  sets.push_back(edge);
  return sets;
}

// The kernel's distance test, restated plainly.
inline bool within(double tx, double ty, double tz, double sx, double sy, double sz, double c, bool f32) {
  if (f32) {
    const float fx = float(tx) - float(sx), fy = float(ty) - float(sy), fz = float(tz) - float(sz);
    const float fxx = fx * fx, fyy = fy * fy, fzz = fz * fz;  // separate statements: no contraction
    const float s1 = fxx + fyy;
    const float s2 = s1 + fzz;
    return std::sqrt(s2) <= float(c);
  }
  const double rx = tx - sx, ry = ty - sy, rz = tz - sz;
  const double xx = rx * rx, yy = ry * ry, zz = rz * rz;
  const double s1 = xx + yy;
  const double s2 = s1 + zz;
  return s2 <= c * c;
}

// Particles for the cutoff sum: positions, source strengths q; the first nt are targets.
struct Particles {
  Points p;
  std::vector<double> qx, qy, qz;
  long nt = 0;
};

// A sheet of owned particles plus ghosts around it, pairs at exactly the cutoff (x on a grid
// of step c/2 with c a power of two), pairs whose float32 and double tests disagree, and
// coincident particles (distance 0 between distinct particles).
inline Particles cutoff_particles(double c, long owned, long ghosts) {
  std::mt19937_64 rng(777);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Particles P;
  auto add = [&](double x, double y, double z) {
    P.p.add(x, y, z);
    P.qx.push_back(1e-3 * u(rng));
    P.qy.push_back(1e-3 * u(rng));
    P.qz.push_back(1e-3 * u(rng));
  };
  for (long k = 0; k < owned; ++k) {
    const double a = u(rng), b = u(rng);
    add(a, b, 0.05 * std::sin(2 * a + b) + 0.002 * u(rng));
  }
  // Exactly representable lattice points spaced c/2 apart: many pairs at distance c exactly.
  for (int i = 0; i < 5; ++i) add(0.5 + i * 0.5 * c, 0.5, 0.0);
  // Sources at a distance just above c in double that float32 rounds to within c.
  add(0.3, -0.4, 0.01);
  add(0.3 + c + 1e-9, -0.4, 0.01);
  add(0.3, -0.4 - c - 3e-9, 0.01);
  // Coincident with an owned particle.
  add(P.p.x[0], P.p.y[0], P.p.z[0]);
  P.nt = P.p.size();
  for (long k = 0; k < ghosts; ++k) {  // ghosts: a band around the sheet
    const double a = u(rng), b = u(rng);
    add(a > 0 ? 1.0 + 0.3 * std::fabs(a) : -1.0 - 0.3 * std::fabs(a), 1.3 * b, 0.05 * std::sin(a) + 0.002 * u(rng));
  }
  add(0.3 - c - 1e-9, -0.4, 0.01);  // a ghost of the float32/double pair too
  return P;
}

// Brute force: u[c·nt + i] for every target i against every particle within the cutoff,
// in index order; pairs counts the accepted (target, source) pairs, self included.
inline std::vector<double> brute_force(const Particles& P, double c, bool f32, double eps, unsigned long long& pairs) {
  const long n = P.p.size(), nt = P.nt;
  std::vector<double> u(3 * nt, 0.0);
  pairs = 0;
  for (long i = 0; i < nt; ++i) {
    double ux = 0, uy = 0, uz = 0;
    for (long j = 0; j < n; ++j) {
      if (!within(P.p.x[i], P.p.y[i], P.p.z[i], P.p.x[j], P.p.y[j], P.p.z[j], c, f32)) continue;
      ++pairs;
      const double rx = P.p.x[i] - P.p.x[j], ry = P.p.y[i] - P.p.y[j], rz = P.p.z[i] - P.p.z[j];
      if (rx * rx + ry * ry + rz * rz + eps == 0.0) continue;
      model::br_pair(P.p.x[i], P.p.y[i], P.p.z[i], P.p.x[j], P.p.y[j], P.p.z[j], P.qx[j], P.qy[j], P.qz[j], eps, ux,
                     uy, uz);
    }
    u[i] = ux;
    u[nt + i] = uy;
    u[2 * nt + i] = uz;
  }
  return u;
}

// Sources in sorted order [x|y|z|qx|qy|qz] from the particles and a sorted-position order.
inline std::vector<double> sorted_sources(const Particles& P, const std::vector<long>& order) {
  const long n = P.p.size();
  std::vector<double> s(6 * n);
  for (long q = 0; q < n; ++q) {
    const long k = order[q];
    s[q] = P.p.x[k];
    s[n + q] = P.p.y[k];
    s[2 * n + q] = P.p.z[k];
    s[3 * n + q] = P.qx[k];
    s[4 * n + q] = P.qy[k];
    s[5 * n + q] = P.qz[k];
  }
  return s;
}

// max |a − b| / max |b| per component block of nt entries (0 when b is all zero and a == b).
inline double max_rel(const std::vector<double>& a, const std::vector<double>& b, long nt) {
  double worst = 0;
  for (int c = 0; c < 3; ++c) {
    double d = 0, m = 0;
    for (long i = 0; i < nt; ++i) {
      d = std::max(d, std::fabs(a[c * nt + i] - b[c * nt + i]));
      m = std::max(m, std::fabs(b[c * nt + i]));
    }
    worst = std::max(worst, m > 0 ? d / m : d);
  }
  return worst;
}

// Kernel arguments for sorted sources, their order and cell starts (host or device pointers);
// acc and pairs are left for the caller.
inline model::BRCutoffArgs cutoff_args(const double* sources, long ns, const long* order, long nt,
                                       const search::CellGrid& grid, const long* cell_start, double c,
                                       bool f32, double eps) {
  model::BRCutoffArgs a;
  a.sources = sources;
  a.ns = ns;
  a.order = order;
  a.nt = nt;
  a.grid = grid;
  a.cell_start = cell_start;
  a.cutoff = c;
  a.float32_test = f32;
  a.eps = eps;
  return a;
}

}  // namespace beatnik::test
