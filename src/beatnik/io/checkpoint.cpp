#include "beatnik/io/checkpoint.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <cerrno>
#include <cstdio>

#include "beatnik/base/error.hpp"
#include "beatnik/io/checked_file.hpp"

namespace beatnik::io {

std::string checkpoint_file_name(long step, bool failed) {
  return fmt::format("checkpoint_step{:06d}{}.h5", step, failed ? "_failed" : "");
}

namespace {

// FNV-1a over the metadata a restart uses, so that a damaged step, time or configuration is
// noticed like damaged data.
std::uint64_t meta_checksum(long step, double time, double dt, const std::string& config, const std::string& prov) {
  std::uint64_t h = 1469598103934665603ull;
  auto add = [&](const void* p, size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  };
  const long long st = step;
  add(&st, sizeof st);
  add(&time, sizeof time);
  add(&dt, sizeof dt);
  add(config.data(), config.size());
  add(prov.data(), prov.size());
  return h;
}

bool write_root_attrs(hid_t file, const CheckpointMeta& m, std::uint64_t cz, std::uint64_t cw) {
  bool ok = write_attr(file, "beatnik_kind", std::string("checkpoint")) &&
            write_attr(file, "format_version", kCheckpointFormatVersion) && write_attr(file, "step", m.step) &&
            write_attr(file, "time", m.time) && write_attr(file, "dt", m.dt) &&
            write_attr(file, "config", m.config.dump()) && write_attr(file, "provenance", m.provenance.dump()) &&
            write_attr(file, "meta_checksum",
                       meta_checksum(m.step, m.time, m.dt, m.config.dump(), m.provenance.dump()));
  const std::pair<const char*, std::uint64_t> sums[2] = {{"positions", cz}, {"vorticity", cw}};
  for (const auto& [name, sum] : sums) {
    H5Handle d(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    ok = ok && d && write_attr(d.get(), "checksum", sum);
  }
  return ok;
}

}  // namespace

long write_checkpoint(const std::string& path, Hdf5Mode mode, MPI_Comm comm, const BlockBox& b,
                      const std::vector<double>& positions, const std::vector<double>& vorticity,
                      const CheckpointMeta& meta) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::uint64_t cz = checksum(b, 3, positions.data(), comm);
  const std::uint64_t cw = checksum(b, 2, vorticity.data(), comm);
  const auto slash = path.find_last_of('/');
  const std::string tmp = slash == std::string::npos ? "." + path + ".tmp"
                                                     : path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
  std::string why;
  bool ok = true;
  if (mode == Hdf5Mode::Collective) {
    H5Handle file = create_file(tmp, comm);
    if (!file) {
      ok = false;
      why = "checkpoint: cannot create " + tmp;
    } else {
      H5Handle dxpl = transfer_list(true);
      H5Handle dz = create_dataset(file.get(), "positions", b.nx, b.ny, 3);
      H5Handle dw = create_dataset(file.get(), "vorticity", b.nx, b.ny, 2);
      ok = dz && dw && write_block(dz.get(), b, 3, positions.data(), dxpl.get(), false) &&
           write_block(dw.get(), b, 2, vorticity.data(), dxpl.get(), false);
      dz.reset();
      dw.reset();
      ok = write_root_attrs(file.get(), meta, cz, cw) && ok;
      ok = file.reset() && ok;
      if (!ok) why = "checkpoint: failed writing " + tmp + " (disk full?)";
    }
  } else {
    // Ranks take turns on one file: rank 0 creates it, then each writes its block.
    int token = 1;
    if (rank > 0) MPI_Recv(&token, 1, MPI_INT, rank - 1, 7301, comm, MPI_STATUS_IGNORE);
    if (token) {
      H5Handle file = rank == 0 ? create_file(tmp) : open_file(tmp, true);
      if (!file) {
        ok = false;
        why = "checkpoint: cannot " + std::string(rank == 0 ? "create " : "open ") + tmp;
      } else {
        H5Handle dz = rank == 0 ? create_dataset(file.get(), "positions", b.nx, b.ny, 3)
                                : H5Handle(H5Dopen2(file.get(), "positions", H5P_DEFAULT), H5Dclose);
        H5Handle dw = rank == 0 ? create_dataset(file.get(), "vorticity", b.nx, b.ny, 2)
                                : H5Handle(H5Dopen2(file.get(), "vorticity", H5P_DEFAULT), H5Dclose);
        ok = dz && dw && write_block(dz.get(), b, 3, positions.data(), H5P_DEFAULT, false) &&
             write_block(dw.get(), b, 2, vorticity.data(), H5P_DEFAULT, false);
        dz.reset();
        dw.reset();
        if (rank == 0) ok = write_root_attrs(file.get(), meta, cz, cw) && ok;
        ok = file.reset() && ok;
        if (!ok) why = "checkpoint: failed writing " + tmp + " (disk full?)";
      }
      token = ok ? 1 : 0;
    } else {
      ok = false;
      why = "checkpoint: an earlier rank failed writing " + tmp;
    }
    if (rank + 1 < size) MPI_Send(&token, 1, MPI_INT, rank + 1, 7301, comm);
  }
  if (agree(ok, why, comm)) {
    if (rank == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) {
      ok = false;
      why = file_error("checkpoint: cannot rename " + tmp + " to " + path, errno);
    }
  } else {
    ok = false;
  }
  if (!ok && rank == 0) std::remove(tmp.c_str());
  if (!agree(ok, why, comm)) throw WriteError(why);
  return b.count() * 5 * long(sizeof(double));
}

InputFile inspect_input(const std::string& path, MPI_Comm comm) {
  InputFile in;
  std::string why;
  bool ok = true;
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) {
    ok = false;
    why = "-i " + path + ": no such file";
  } else if (!S_ISREG(st.st_mode)) {
    ok = false;
    why = "-i " + path + ": not a regular file";
  } else if (quiet_hdf5(), H5Fis_hdf5(path.c_str()) <= 0) {
    ok = false;
    why = "-i " + path + ": not an HDF5 file (or truncated or corrupted); -i takes a beatnik checkpoint or "
          "an HDF5 surface file (docs/io.md)";
  }
  if (ok) {
    H5Handle f = open_file(path, false);
    if (!f) {
      ok = false;
      why = "-i " + path + ": cannot be opened as HDF5 (truncated or corrupted?)";
    } else {
      const auto kind = read_attr_string(f.get(), "beatnik_kind");
      const auto zs = dataset_shape(f.get(), "positions");
      const auto ws = dataset_shape(f.get(), "vorticity");
      in.checkpoint = kind && *kind == "checkpoint";
      if (kind && !in.checkpoint) {
        ok = false;
        why = "-i " + path + ": this is a beatnik " + *kind + " file, not a checkpoint or surface file";
      } else if (zs.size() != 3 || zs[2] != 3 || ws.size() != 3 || ws[2] != 2 || zs[0] != ws[0] || zs[1] != ws[1]) {
        ok = false;
        why = "-i " + path + ": not a beatnik checkpoint or surface file (expected datasets /positions "
              "(n_i, n_j, 3) and /vorticity (n_i, n_j, 2) of float64; docs/io.md)";
      } else {
        in.nodes_i = long(zs[0]);
        in.nodes_j = long(zs[1]);
      }
      if (ok && in.checkpoint) {
        const auto ver = read_attr_long(f.get(), "format_version");
        const auto step = read_attr_long(f.get(), "step");
        const auto time = read_attr_double(f.get(), "time");
        const auto dt = read_attr_double(f.get(), "dt");
        const auto config = read_attr_string(f.get(), "config");
        const auto prov = read_attr_string(f.get(), "provenance");
        H5Handle dz(H5Dopen2(f.get(), "positions", H5P_DEFAULT), H5Dclose);
        H5Handle dw(H5Dopen2(f.get(), "vorticity", H5P_DEFAULT), H5Dclose);
        const auto cz = dz ? read_attr_u64(dz.get(), "checksum") : std::nullopt;
        const auto cw = dw ? read_attr_u64(dw.get(), "checksum") : std::nullopt;
        const auto cm = read_attr_u64(f.get(), "meta_checksum");
        if (!ver || !step || !time || !dt || !config || !prov || !cz || !cw || !cm || *step < 0) {
          ok = false;
          why = "-i " + path + ": damaged or truncated checkpoint (missing or unreadable metadata)";
        } else if (*cm != meta_checksum(*step, *time, *dt, *config, *prov)) {
          ok = false;
          why = "-i " + path + ": checksum mismatch in the checkpoint's metadata (step, time, configuration): "
                "the checkpoint is corrupted";
        } else if (*ver != kCheckpointFormatVersion) {
          ok = false;
          why = fmt::format("-i {}: checkpoint format version {} is not supported (this beatnik reads {})", path, *ver,
                            kCheckpointFormatVersion);
        } else {
          in.meta.step = *step;
          in.meta.time = *time;
          in.meta.dt = *dt;
          in.checksum_positions = *cz;
          in.checksum_vorticity = *cw;
          in.meta.config = nlohmann::json::parse(*config, nullptr, false);
          in.meta.provenance = nlohmann::json::parse(*prov, nullptr, false);
          if (in.meta.config.is_discarded() || !in.meta.config.is_object() || !in.meta.config.contains("must_match")) {
            ok = false;
            why = "-i " + path + ": damaged checkpoint (its configuration cannot be read)";
          }
        }
      }
    }
  }
  if (!agree(ok, why, comm)) throw InputError(why);
  return in;
}

void read_input_block(const std::string& path, const InputFile& in, const BlockBox& b, MPI_Comm comm,
                      std::vector<double>& positions, std::vector<double>& vorticity) {
  positions.assign(static_cast<size_t>(b.count()) * 3, 0.0);
  vorticity.assign(static_cast<size_t>(b.count()) * 2, 0.0);
  std::string why;
  bool ok = true;
  {
    H5Handle f = open_file(path, false);
    H5Handle dz = f ? H5Handle(H5Dopen2(f.get(), "positions", H5P_DEFAULT), H5Dclose) : H5Handle();
    H5Handle dw = f ? H5Handle(H5Dopen2(f.get(), "vorticity", H5P_DEFAULT), H5Dclose) : H5Handle();
    ok = dz && dw && read_block(dz.get(), b, 3, positions.data()) && read_block(dw.get(), b, 2, vorticity.data());
    if (!ok) why = "-i " + path + ": the surface data cannot be read (truncated or corrupted file)";
  }
  if (!agree(ok, why, comm)) throw InputError(why);
  if (in.checkpoint) {
    const std::uint64_t cz = checksum(b, 3, positions.data(), comm);
    const std::uint64_t cw = checksum(b, 2, vorticity.data(), comm);
    if (cz != in.checksum_positions || cw != in.checksum_vorticity)
      throw InputError("-i " + path + ": checksum mismatch in " +
                       std::string(cz != in.checksum_positions ? "/positions" : "/vorticity") +
                       ": the checkpoint is corrupted");
  }
  // Non-finite values in a surface file cannot start a run.
  bool finite = true;
  for (double v : positions) finite = finite && std::isfinite(v);
  for (double v : vorticity) finite = finite && std::isfinite(v);
  why = "-i " + path + ": the surface holds non-finite values";
  if (!in.checkpoint && !agree(finite, why, comm)) throw InputError(why);
}

}  // namespace beatnik::io
