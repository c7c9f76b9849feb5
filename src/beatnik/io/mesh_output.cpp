#include "beatnik/io/mesh_output.hpp"

#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "beatnik/base/error.hpp"
#include "beatnik/io/checked_file.hpp"

namespace beatnik::io {

std::string mesh_file_name(long step) { return fmt::format("beatnik_step{:06d}.h5", step); }
std::string mesh_block_file_name(long step, int rank) {
  return fmt::format("beatnik_step{:06d}_rank{:05d}.h5", step, rank);
}

MeshOutput::MeshOutput(std::string dir, Hdf5Mode mode, MPI_Comm comm, std::vector<BlockBox> boxes)
    : dir_(std::move(dir)), mode_(mode), comm_(comm), boxes_(std::move(boxes)) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

namespace {

bool write_common_attrs(hid_t file, const MeshFrame& f, const BlockBox& global) {
  return write_attr(file, "beatnik_kind", std::string("mesh")) && write_attr(file, "format_version", 1L) &&
         write_attr(file, "step", f.step) && write_attr(file, "time", f.time) && write_attr(file, "dt", f.dt) &&
         write_attr(file, "nodes_i", long(global.nx)) && write_attr(file, "nodes_j", long(global.ny));
}

// Writes the four fields of this rank's block into an open file (datasets created here).
// `whole`: the datasets are the block alone (blocks mode).
bool write_fields(hid_t file, const MeshFrame& f, const BlockBox& b, int rank, bool whole, bool collective) {
  const hsize_t d0 = whole ? b.ni : b.nx, d1 = whole ? b.nj : b.ny;
  H5Handle dxpl = transfer_list(collective);
  const std::vector<int> owner(static_cast<size_t>(b.count()), rank);
  struct Item {
    const char* name;
    int k;
    const void* data;
    bool i32;
  } items[4] = {{"positions", 3, f.positions.data(), false},
                {"vorticity", 2, f.vorticity.data(), false},
                {"velocity", 3, f.velocity.data(), false},
                {"rank", 0, owner.data(), true}};
  bool ok = true;
  for (const Item& it : items) {
    H5Handle d = create_dataset(file, it.name, d0, d1, hsize_t(it.k), it.i32);
    ok = ok && d && write_block(d.get(), b, it.k, it.data, dxpl.get(), whole, it.i32);
  }
  return ok;
}

// `lead`: dimensions given as 1 x nx x ny (x k), the node dimensions of the topology below.
std::string data_item(const std::string& file, const char* path, int nx, int ny, int k, bool i32, bool lead = true) {
  const std::string l = lead ? "1 " : "";
  const std::string dims = k > 0 ? fmt::format("{}{} {} {}", l, nx, ny, k) : fmt::format("{}{} {}", l, nx, ny);
  return fmt::format(R"(<DataItem Dimensions="{}" NumberType="{}" Precision="{}" Format="HDF">{}:/{}</DataItem>)",
                     dims, i32 ? "Int" : "Float", i32 ? 4 : 8, file, path);
}

// One uniform grid (a whole mesh or one rank's block) of the index.
std::string uniform_grid(const std::string& name, const std::string& file, int ni, int nj, const std::string& indent,
                         const std::string& time) {
  std::string s;
  s += fmt::format("{}<Grid Name=\"{}\" GridType=\"Uniform\">\n", indent, name);
  if (!time.empty()) s += fmt::format("{}  {}\n", indent, time);
  // The surface is a structured mesh of 1 x ni x nj nodes: VTK's XDMF reader (ParaView) reads
  // vector attributes of a 3DSMesh but not of a 2DSMesh. The HDF5 datasets stay (ni, nj, k).
  s += fmt::format("{}  <Topology TopologyType=\"3DSMesh\" Dimensions=\"1 {} {}\"/>\n", indent, ni, nj);
  s += fmt::format("{}  <Geometry GeometryType=\"XYZ\">\n{}    {}\n{}  </Geometry>\n", indent, indent,
                   data_item(file, "positions", ni, nj, 3, false, false), indent);
  const struct {
    const char* name;
    const char* type;
    int k;
    bool i32;
  } attrs[3] = {{"vorticity", "Vector", 2, false}, {"velocity", "Vector", 3, false}, {"rank", "Scalar", 0, true}};
  for (const auto& a : attrs)
    s += fmt::format("{}  <Attribute Name=\"{}\" AttributeType=\"{}\" Center=\"Node\">\n{}    {}\n{}  </Attribute>\n",
                     indent, a.name, a.type, indent, data_item(file, a.name, ni, nj, a.k, a.i32), indent);
  s += fmt::format("{}</Grid>\n", indent);
  return s;
}

bool file_exists(const std::string& p) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (f) std::fclose(f);
  return f != nullptr;
}

}  // namespace

long MeshOutput::write(const MeshFrame& f) {
  const BlockBox& b = boxes_[rank_];
  std::string why;
  bool ok = true;
  const long bytes = b.count() * long(8 * 8 + 4);
  if (mode_ == Hdf5Mode::Collective) {
    const std::string final_path = dir_ + "/" + mesh_file_name(f.step);
    const std::string tmp = dir_ + "/." + mesh_file_name(f.step) + ".tmp";
    {
      H5Handle file = create_file(tmp, comm_);
      // File creation is collective: every rank has the same verdict.
      if (!file) {
        why = "mesh output: cannot create " + tmp;
        ok = false;
      } else {
        ok = write_common_attrs(file.get(), f, b) && write_fields(file.get(), f, b, rank_, false, true);
        ok = file.reset() && ok;
        if (!ok) why = "mesh output: failed writing " + tmp + " (disk full?)";
      }
    }
    if (agree(ok, why, comm_)) {
      if (rank_ == 0 && std::rename(tmp.c_str(), final_path.c_str()) != 0) {
        ok = false;
        why = file_error("mesh output: cannot rename " + tmp + " to " + final_path, errno);
      }
    } else {
      ok = false;
    }
    if (rank_ == 0 && !ok) std::remove(tmp.c_str());
  } else {
    ok = write_own_block(f, why);
  }
  commit(f.step, f.time, ok, why);
  return bytes;
}

bool MeshOutput::write_own_block(const MeshFrame& f, std::string& why) const {
  const BlockBox& b = boxes_[rank_];
  const std::string name = mesh_block_file_name(f.step, rank_);
  const std::string final_path = dir_ + "/" + name, tmp = dir_ + "/." + name + ".tmp";
  H5Handle file = create_file(tmp);
  if (!file) {
    why = "mesh output: cannot create " + tmp;
    return false;
  }
  bool ok = write_common_attrs(file.get(), f, b) && write_attr(file.get(), "rank", long(rank_)) &&
            write_attr(file.get(), "block_i0", long(b.i0)) && write_attr(file.get(), "block_j0", long(b.j0)) &&
            write_fields(file.get(), f, b, rank_, true, false);
  ok = file.reset() && ok;
  if (!ok) why = "mesh output: failed writing " + tmp + " (disk full?)";
  if (ok && std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ok = false;
    why = file_error("mesh output: cannot rename " + tmp + " to " + final_path, errno);
  }
  if (!ok) std::remove(tmp.c_str());
  return ok;
}

void MeshOutput::commit(long step, double time, bool ok, std::string why) {
  if (!agree(ok, why, comm_)) throw WriteError(why);

  Entry e{step, time, {}};
  if (mode_ == Hdf5Mode::Blocks) e.blocks = boxes_;
  index_.erase(std::remove_if(index_.begin(), index_.end(), [&](const Entry& x) { return x.step == step; }),
               index_.end());
  index_.push_back(e);
  ok = true;
  if (rank_ == 0) {
    try {
      write_index();
    } catch (const Error& err) {
      ok = false;
      why = err.what();
    }
  }
  if (!agree(ok, why, comm_)) throw WriteError(why);
}

void MeshOutput::write_index() {
  std::sort(index_.begin(), index_.end(), [](const Entry& a, const Entry& b) { return a.step < b.step; });
  std::string s = "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n  <Domain>\n";
  s += "    <Grid Name=\"surface\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const Entry& e : index_) {
    const std::string time = fmt::format("<Time Value=\"{:.17g}\"/>", e.time);
    if (e.blocks.empty()) {
      const BlockBox& g = boxes_.front();
      s += uniform_grid(fmt::format("step {}", e.step), mesh_file_name(e.step), g.nx, g.ny, "      ", time);
    } else {
      s += fmt::format("      <Grid Name=\"step {}\" GridType=\"Collection\" CollectionType=\"Spatial\">\n", e.step);
      s += fmt::format("        {}\n", time);
      for (size_t r = 0; r < e.blocks.size(); ++r) {
        const BlockBox& b = e.blocks[r];
        s += uniform_grid(fmt::format("rank {} block ({}, {})", r, b.i0, b.j0),
                          mesh_block_file_name(e.step, static_cast<int>(r)), b.ni, b.nj, "        ", "");
      }
      s += "      </Grid>\n";
    }
  }
  s += "    </Grid>\n  </Domain>\n</Xdmf>\n";
  write_file_checked(dir_ + "/" + kXdmfIndexName, s);
}

void MeshOutput::adopt_existing(long upto) {
  if (rank_ == 0) {
    // Look at the directory once: names beatnik_stepNNNNNN.h5 or beatnik_stepNNNNNN_rank00000.h5.
    std::vector<long> shared, blocked;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d)) {
        long step = -1;
        int rank = -1, used = 0;
        const std::string n = e->d_name;
        if (std::sscanf(n.c_str(), "beatnik_step%ld_rank%d.h5%n", &step, &rank, &used) == 2 && used == int(n.size())) {
          if (rank == 0 && step <= upto) blocked.push_back(step);
        } else if (std::sscanf(n.c_str(), "beatnik_step%ld.h5%n", &step, &used) == 1 && used == int(n.size())) {
          if (step <= upto) shared.push_back(step);
        }
      }
      closedir(d);
    }
    // VTK's XDMF reader (ParaView) takes the structure of every time step from the first one:
    // only steps written the way this run writes (same mode; for blocks, the same blocks) join.
    if (mode_ != Hdf5Mode::Collective) shared.clear();
    if (mode_ != Hdf5Mode::Blocks) blocked.clear();
    for (long step : shared) {
      H5Handle f = open_file(dir_ + "/" + mesh_file_name(step), false);
      const auto t = f ? read_attr_double(f.get(), "time") : std::nullopt;
      const auto ni = f ? read_attr_long(f.get(), "nodes_i") : std::nullopt;
      if (t && ni && *ni == boxes_.front().nx) index_.push_back(Entry{step, *t, {}});
    }
    for (long step : blocked) {
      Entry e{step, 0.0, {}};
      bool ok = true;
      for (int r = 0; ok; ++r) {
        const std::string p = dir_ + "/" + mesh_block_file_name(step, r);
        if (!file_exists(p)) break;
        H5Handle f = open_file(p, false);
        const auto t = f ? read_attr_double(f.get(), "time") : std::nullopt;
        const auto i0 = f ? read_attr_long(f.get(), "block_i0") : std::nullopt;
        const auto j0 = f ? read_attr_long(f.get(), "block_j0") : std::nullopt;
        const auto shape = f ? dataset_shape(f.get(), "rank") : std::vector<hsize_t>{};
        ok = t && i0 && j0 && shape.size() == 2;
        if (ok) {
          e.time = *t;
          e.blocks.push_back(BlockBox{boxes_.front().nx, boxes_.front().ny, int(*i0), int(*j0), int(shape[0]),
                                      int(shape[1])});
        }
      }
      bool same = ok && e.blocks.size() == boxes_.size();
      for (size_t r = 0; same && r < boxes_.size(); ++r)
        same = e.blocks[r].i0 == boxes_[r].i0 && e.blocks[r].j0 == boxes_[r].j0 && e.blocks[r].ni == boxes_[r].ni &&
               e.blocks[r].nj == boxes_[r].nj;
      if (same) index_.push_back(e);
    }
  }
  // Only rank 0 writes the index; the others need nothing of it.
  MPI_Barrier(comm_);
}

}  // namespace beatnik::io
