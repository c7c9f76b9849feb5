// The io/ layer on its own: checksums independent of the decomposition, checkpoints written on
// one decomposition and read on another (both HDF5 modes), refusals raised on every rank, and
// mesh output files with their index.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/io/checkpoint.hpp"
#include "beatnik/io/mesh_output.hpp"
#include "support/test_support.hpp"

namespace beatnik::io {
namespace {

constexpr int NX = 13, NY = 10;

double value(int i, int j, int c) { return std::sin(0.3 * i + 0.7 * j + 1.1 * c) * 1e3 + i - j; }

// Rows split among ranks (`by_rows`) or columns.
BlockBox block(bool by_rows) {
  const int r = test::world_rank(), p = test::world_size();
  const int n = by_rows ? NX : NY;
  const int lo = n * r / p, hi = n * (r + 1) / p;
  return by_rows ? BlockBox{NX, NY, lo, 0, hi - lo, NY} : BlockBox{NX, NY, 0, lo, NX, hi - lo};
}

std::vector<double> fill(const BlockBox& b, int k) {
  std::vector<double> v(static_cast<size_t>(b.count()) * k);
  for (int i = 0; i < b.ni; ++i)
    for (int j = 0; j < b.nj; ++j)
      for (int c = 0; c < k; ++c) v[(size_t(i) * b.nj + j) * k + c] = value(b.i0 + i, b.j0 + j, c);
  return v;
}

// A folder every rank writes into, removed with what it holds when the test ends.
struct SharedDir {
  std::string path;
  SharedDir() {
    if (test::world_rank() == 0) {
      char tmpl[] = "/tmp/beatnik-io-unit-XXXXXX";
      path = mkdtemp(tmpl);
    }
    int len = static_cast<int>(path.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(len);
    MPI_Bcast(path.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  ~SharedDir() {
    MPI_Barrier(MPI_COMM_WORLD);  // every rank done with its files
    if (test::world_rank() == 0) std::filesystem::remove_all(path);
  }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;
};

std::vector<Hdf5Mode> modes() {
  std::vector<Hdf5Mode> m{Hdf5Mode::Blocks};
  if (parallel_hdf5_built()) m.push_back(Hdf5Mode::Collective);
  return m;
}

TEST(IoChecksum, IndependentOfDecomposition) {
  const BlockBox rows = block(true), cols = block(false);
  const BlockBox whole{NX, NY, 0, 0, NX, NY};
  const auto a = checksum(rows, 3, fill(rows, 3).data(), MPI_COMM_WORLD);
  const auto b = checksum(cols, 3, fill(cols, 3).data(), MPI_COMM_WORLD);
  const auto all = fill(whole, 3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, checksum_part(whole, 3, all.data()));
  auto changed = all;
  changed[17] = std::nextafter(changed[17], 1e300);  // one bit
  EXPECT_NE(a, checksum_part(whole, 3, changed.data()));
}

TEST(IoCheckpoint, WrittenOnRowsReadOnColumns) {
  const SharedDir shared;
  const std::string& dir = shared.path;
  for (Hdf5Mode mode : modes()) {
    const BlockBox rows = block(true), cols = block(false);
    CheckpointMeta meta;
    meta.step = 12;
    meta.time = 0.125;
    meta.dt = 0.125 / 12;
    meta.config = {{"must_match", {{"-a/--atwood", 0.5}}}};
    meta.provenance = {{"version", "test"}};
    const std::string path = dir + "/" + checkpoint_file_name(12);
    write_checkpoint(path, mode, MPI_COMM_WORLD, rows, fill(rows, 3), fill(rows, 2), meta);
    const InputFile in = inspect_input(path, MPI_COMM_WORLD);
    EXPECT_TRUE(in.checkpoint);
    EXPECT_EQ(in.nodes_i, NX);
    EXPECT_EQ(in.nodes_j, NY);
    EXPECT_EQ(in.meta.step, 12);
    EXPECT_EQ(in.meta.time, 0.125);
    EXPECT_EQ(in.meta.config, meta.config);
    std::vector<double> z, w;
    read_input_block(path, in, cols, MPI_COMM_WORLD, z, w);
    EXPECT_EQ(z, fill(cols, 3)) << to_string(mode);
    EXPECT_EQ(w, fill(cols, 2)) << to_string(mode);
    // No temporary file is left behind.
    if (test::world_rank() == 0) {
      std::ifstream tmp(dir + "/." + checkpoint_file_name(12) + ".tmp");
      EXPECT_FALSE(tmp.good());
    }
  }
}

TEST(IoCheckpoint, MissingFileRefusedOnEveryRank) {
  bool thrown = false;
  std::string msg;
  try {
    inspect_input("/nonexistent/checkpoint.h5", MPI_COMM_WORLD);
  } catch (const InputError& e) {
    thrown = true;
    msg = e.what();
  }
  EXPECT_TRUE(test::all_ranks(thrown));
  EXPECT_NE(msg.find("no such file"), std::string::npos) << msg;
}

TEST(IoMesh, FilesAndIndex) {
  const SharedDir shared;
  const std::string& dir = shared.path;
  for (Hdf5Mode mode : modes()) {
    std::vector<BlockBox> boxes;
    for (int r = 0; r < test::world_size(); ++r) {
      const int lo = NX * r / test::world_size(), hi = NX * (r + 1) / test::world_size();
      boxes.push_back(BlockBox{NX, NY, lo, 0, hi - lo, NY});
    }
    const BlockBox b = boxes[test::world_rank()];
    MeshOutput out(dir + (mode == Hdf5Mode::Blocks ? "" : ""), mode, MPI_COMM_WORLD, boxes);
    MeshFrame f;
    f.step = 3;
    f.time = 0.5;
    f.dt = 0.5 / 3;
    f.positions = fill(b, 3);
    f.vorticity = fill(b, 2);
    f.velocity = fill(b, 3);
    const long bytes = out.write(f);
    EXPECT_EQ(bytes, b.count() * 68);
    if (test::world_rank() == 0) {
      std::ifstream idx(dir + "/" + kXdmfIndexName);
      std::string text((std::istreambuf_iterator<char>(idx)), std::istreambuf_iterator<char>());
      EXPECT_NE(text.find("CollectionType=\"Temporal\""), std::string::npos);
      if (mode == Hdf5Mode::Blocks) {
        EXPECT_NE(text.find(mesh_block_file_name(3, test::world_size() - 1)), std::string::npos);
      } else {
        EXPECT_NE(text.find(mesh_file_name(3) + ":/positions"), std::string::npos);
        H5Handle file = open_file(dir + "/" + mesh_file_name(3), false);
        ASSERT_TRUE(file);
        EXPECT_EQ(dataset_shape(file.get(), "positions"), (std::vector<hsize_t>{NX, NY, 3}));
        std::vector<double> all(NX * NY * 3);
        read_block(H5Dopen2(file.get(), "positions", H5P_DEFAULT), BlockBox{NX, NY, 0, 0, NX, NY}, 3, all.data());
        EXPECT_EQ(all, fill(BlockBox{NX, NY, 0, 0, NX, NY}, 3));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

}  // namespace
}  // namespace beatnik::io
