#include "beatnik/app/run_io.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "beatnik/app/provenance.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::app {

void validate_io_options(const Options& o) {
  if (o.checkpoint_every < 0) throw InputError("--checkpoint-every must be zero or positive");
  if (o.checkpoint_keep < 1) throw InputError("--checkpoint-keep must be at least 1");
  if (o.async_output && o.hdf5_mode == "collective")
    throw InputError("--async-output writes every rank's own block from a background thread (no MPI in "
                     "it): it goes with --hdf5-mode blocks or auto, not collective");
  io::Hdf5Mode mode;
  std::string why;
  if (!io::parse_hdf5_mode(o.hdf5_mode, mode, why))
    throw InputError("unknown --hdf5-mode '" + o.hdf5_mode + "' (collective, blocks or auto)");
  if (!why.empty()) throw NotAvailable(why);
  if (o.output_dir.empty()) throw InputError("-o/--output-dir must name a directory");
}

bool writes_output_dir(const Options& o) { return o.write_frequency > 0 || o.checkpoint_every > 0; }

std::string prepare_output_dir(const std::string& dir) {
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0) {
    if (mkdir(dir.c_str(), 0777) != 0)
      return fmt::format("-o {}: the directory does not exist and cannot be created (does its parent exist?)", dir);
    return {};
  }
  if (!S_ISDIR(st.st_mode)) return fmt::format("-o {}: not a directory", dir);
  if (access(dir.c_str(), W_OK) != 0) return fmt::format("-o {}: directory is not writable", dir);
  return {};
}

nlohmann::json must_match(const RunConfig& c) {
  const Options& o = c.options;
  nlohmann::json m;
  m["-n/--nodes (after -w)"] = c.nodes;
  m["-B/--bounding-box (after -w)"] = c.half_width;
  m["--profile"] = o.profile;
  m["-b/--boundary"] = o.boundary;
  m["-O/--order"] = o.order;
  m["-a/--atwood"] = o.atwood;
  m["-g/--gravity"] = o.gravity;
  m["-M/--mu"] = o.mu;
  m["-e/--epsilon"] = o.epsilon;
  m["--metric-power"] = c.model.metric_power;
  m["-d/--dt"] = c.dt;
  m["--br-images"] = o.br_images;
  m["-S/--solver"] = o.solver;
  if (o.solver == "cutoff") m["-c/--cutoff"] = o.cutoff;
  return m;
}

io::InputFile check_input(const RunConfig& c, MPI_Comm comm) {
  const std::string path = *c.options.input;
  io::InputFile in = io::inspect_input(path, comm);
  // From here on every rank holds the same file facts: the verdicts below agree by themselves.
  const auto& g = c.geometry;
  if (in.nodes_i != g.nodes[0] || in.nodes_j != g.nodes[1])
    throw InputError(fmt::format("-i {}: the file's surface has {} x {} nodes but this run's mesh has {} x {} "
                                 "(set -n to match the file)",
                                 path, in.nodes_i, in.nodes_j, g.nodes[0], g.nodes[1]));
  if (!in.checkpoint) return in;
  const nlohmann::json want = in.meta.config["must_match"], have = must_match(c);
  for (auto& [label, value] : want.items()) {
    const bool same = have.contains(label) && have[label] == value;
    if (!same)
      throw InputError(fmt::format("-i {}: the checkpoint was written with {} {} but this run has {}; physics and "
                                   "mesh options must match the checkpoint (give {} {})",
                                   path, label, value.dump(), have.contains(label) ? have[label].dump() : "none",
                                   label.substr(0, label.find(' ')), value.dump()));
  }
  for (auto& [label, value] : have.items())
    if (!want.contains(label))
      throw InputError(fmt::format("-i {}: this run sets {} {}, which the checkpoint's run did not have", path, label,
                                   value.dump()));
  if (c.steps <= in.meta.step)
    throw InputError(fmt::format("-i {}: the checkpoint is at step {}, and -t counts from the run's first step: "
                                 "give -t greater than {} (this run has -t {})",
                                 path, in.meta.step, in.meta.step, c.steps));
  if (c.warmup >= c.steps - in.meta.step)
    throw InputError(fmt::format("-i {}: the checkpoint is at step {}, so this run takes {} step(s): --warmup {} "
                                 "would leave none to measure",
                                 path, in.meta.step, c.steps - in.meta.step, c.warmup));
  return in;
}

namespace {

io::BlockBox block_of(const Simulation& sim) {
  const auto& g = sim.config().geometry;
  const Box2& b = sim.mesh().owned();
  return io::BlockBox{g.nodes[0], g.nodes[1], b.lo[0], b.lo[1], b.extent(0), b.extent(1)};
}

// Owned nodes of components c0..c0+k-1 of a field, node-major on the host. Only these
// components' planes are copied from the device.
// Owned nodes of components c0..c0+k-1 of host planes laid out as L.
std::vector<double> owned_of_planes(const double* planes, const GhostedLayout& L, int c0, int k) {
  std::vector<double> out(static_cast<size_t>(L.owned_count()) * k);
  for (int c = 0; c < k; ++c) {
    const double* src = planes + (c0 + c) * L.plane();
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j) out[(static_cast<size_t>(i) * L.nj + j) * k + c] = src[L.index(i, j)];
  }
  return out;
}

std::vector<double> owned_host(const mesh::Field& f, int c0, int k) {
  const GhostedLayout L = f.layout();
  std::vector<double> plane(static_cast<size_t>(L.plane()));
  std::vector<double> out(static_cast<size_t>(L.owned_count()) * k);
  for (int c = 0; c < k; ++c) {
    const double* src = f.comp(c0 + c);
    if (f.space() == exec::Space::Host) {
      for (int i = 0; i < L.ni; ++i)
        for (int j = 0; j < L.nj; ++j) out[(static_cast<size_t>(i) * L.nj + j) * k + c] = src[L.index(i, j)];
    } else {
      exec::copy(plane.data(), exec::Space::Host, src, f.space(), plane.size());
      for (int i = 0; i < L.ni; ++i)
        for (int j = 0; j < L.nj; ++j) out[(static_cast<size_t>(i) * L.nj + j) * k + c] = plane[L.index(i, j)];
    }
  }
  return out;
}

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_stop_signal != 0) {  // second signal: stop now
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_stop_signal = sig;
}

}  // namespace

void load_input(Simulation& sim, const io::InputFile& in) {
  std::vector<double> z, w;
  io::read_input_block(*sim.config().options.input, in, block_of(sim), sim.mesh().grid().comm(), z, w);
  sim.restore(in.checkpoint ? in.meta.step : 0, z, w);
}

void install_stop_signals() {
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

int stop_requested(MPI_Comm comm) {
  int s = static_cast<int>(g_stop_signal);
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_MAX, comm);
  return s;
}

RunIo::RunIo(Simulation& sim, const Options& o, std::vector<std::string> argv)
    : sim_(sim), o_(o), argv_(std::move(argv)) {
  std::string why;
  io::parse_hdf5_mode(o.hdf5_mode, mode_, why);
  box_ = block_of(sim);
  io::Hdf5Mode mesh_mode = o.async_output ? io::Hdf5Mode::Blocks : mode_;
  if (o.write_frequency > 0) {
    std::vector<io::BlockBox> boxes;
    const auto& g = sim.config().geometry;
    for (const Box2& b : sim.mesh().decomposition().all_owned())
      boxes.push_back(io::BlockBox{g.nodes[0], g.nodes[1], b.lo[0], b.lo[1], b.extent(0), b.extent(1)});
    mesh_out_ = std::make_unique<io::MeshOutput>(o.output_dir, mesh_mode, sim.mesh().grid().comm(), boxes);
    if (sim.first_step() > 0) mesh_out_->adopt_existing(sim.first_step());
  }
}

io::MeshFrame RunIo::frame(bool with_velocity) const {
  io::MeshFrame f;
  f.step = sim_.steps_done();
  f.time = sim_.time();
  f.dt = sim_.config().dt;
  f.positions = owned_host(sim_.state(), model::kZ1, 3);
  f.vorticity = owned_host(sim_.state(), model::kW1, 2);
  if (with_velocity) f.velocity = owned_host(sim_.last_rate(), 0, 3);
  else f.velocity.assign(f.positions.size(), 0.0);  // no derivative evaluated yet
  return f;
}

RunIo::~RunIo() {
  if (pending_ && pending_->writer.joinable()) pending_->writer.join();
}

void RunIo::finish() {
  if (!pending_) return;
  const double t0 = wall_seconds();
  pending_->writer.join();
  std::unique_ptr<Pending> p = std::move(pending_);
  mesh_.background += p->seconds;
  mesh_out_->commit(p->frame.step, p->frame.time, p->ok, p->why);
  const double dt = wall_seconds() - t0;
  mesh_.seconds += dt;
  sim_.timers().add("io.mesh", dt, 0);
}

void RunIo::write_mesh() {
  const double t0 = wall_seconds();
  if (o_.async_output) {
    // Wait for (and commit) the previous step's output, copy this step's, write it behind.
    finish();
    // The stepping thread only copies the fields' memory (5 + 3 planes); the writer thread
    // picks out the owned nodes and writes them.
    pending_ = std::make_unique<Pending>();
    Pending* p = pending_.get();
    p->frame.step = sim_.steps_done();
    p->frame.time = sim_.time();
    p->frame.dt = sim_.config().dt;
    const mesh::Field& st = sim_.state();
    const mesh::Field& rt = sim_.last_rate();
    p->state_layout = st.layout();
    p->rate_layout = rt.layout();
    snap_state_.resize(static_cast<size_t>(st.layout().plane()) * model::kStateComps);
    exec::copy(snap_state_.data(), exec::Space::Host, st.comp(0), st.space(), snap_state_.size());
    p->state = snap_state_.data();
    if (sim_.steps_this_run() > 0) {
      snap_rate_.resize(static_cast<size_t>(rt.layout().plane()) * 3);
      exec::copy(snap_rate_.data(), exec::Space::Host, rt.comp(0), rt.space(), snap_rate_.size());
      p->rate = snap_rate_.data();
    }
    const io::MeshOutput* out = mesh_out_.get();
    p->writer = std::thread([p, out] {
      const double w0 = wall_seconds();
      p->frame.positions = owned_of_planes(p->state, p->state_layout, model::kZ1, 3);
      p->frame.vorticity = owned_of_planes(p->state, p->state_layout, model::kW1, 2);
      p->frame.velocity = p->rate == nullptr ? std::vector<double>(p->frame.positions.size(), 0.0)
                                             : owned_of_planes(p->rate, p->rate_layout, 0, 3);
      p->ok = out->write_own_block(p->frame, p->why);
      p->seconds = wall_seconds() - w0;
    });
    mesh_.bytes += mesh_out_->bytes_per_rank();
    mesh_.files += 1;
    const double dt = wall_seconds() - t0;
    mesh_.seconds += dt;
    sim_.timers().add("io.mesh", dt);
    last_mesh_ = sim_.steps_done();
    return;
  }
  const io::MeshFrame f = frame(sim_.steps_this_run() > 0);
  mesh_.bytes += mesh_out_->write(f);
  mesh_.files += mesh_out_->mode() == io::Hdf5Mode::Blocks || sim_.mesh().grid().rank() == 0 ? 1 : 0;
  const double dt = wall_seconds() - t0;
  mesh_.seconds += dt;
  sim_.timers().add("io.mesh", dt);
  last_mesh_ = sim_.steps_done();
}

std::string RunIo::write_checkpoint(bool failed) {
  finish();  // one HDF5 user at a time
  const double t0 = wall_seconds();
  const long step = sim_.steps_done();
  io::CheckpointMeta meta;
  meta.step = step;
  meta.time = sim_.time();
  meta.dt = sim_.config().dt;
  meta.config = {{"must_match", must_match(sim_.config())},
                 {"ranks", sim_.mesh().grid().size()},
                 {"ranks_grid", sim_.config().procs},
                 {"exec", exec::to_string(sim_.config().space)},
                 {"fft", sim_.config().fft.describe()},
                 {"first_step_of_run", sim_.first_step()},
                 {"failed", failed}};
  meta.provenance = provenance(argv_, sim_.context().host_of_rank());
  const std::string path = o_.output_dir + "/" + io::checkpoint_file_name(step, failed);
  ckpt_.bytes += io::write_checkpoint(path, mode_, sim_.mesh().grid().comm(), box_,
                                      owned_host(sim_.state(), model::kZ1, 3), owned_host(sim_.state(), model::kW1, 2),
                                      meta);
  ckpt_.files += sim_.mesh().grid().rank() == 0 ? 1 : 0;
  if (!failed) {
    last_ckpt_ = step;
    kept_.push_back(path);
    while (static_cast<int>(kept_.size()) > o_.checkpoint_keep) {
      if (sim_.mesh().grid().rank() == 0) std::remove(kept_.front().c_str());
      kept_.erase(kept_.begin());
    }
  }
  const double dt = wall_seconds() - t0;
  ckpt_.seconds += dt;
  sim_.timers().add("io.checkpoint", dt);
  written.push_back(path);
  return path;
}

void RunIo::at_start() {
  if (mesh_out_ && sim_.steps_this_run() == 0 && sim_.first_step() == 0) write_mesh();
}

void RunIo::after_step(bool last) {
  const long s = sim_.steps_done();
  if (mesh_out_ && (s % o_.write_frequency == 0 || last)) write_mesh();
  if (o_.checkpoint_every > 0 && (s % o_.checkpoint_every == 0 || last)) write_checkpoint(false);
}

std::string RunIo::at_stop() {
  finish();
  if (last_ckpt_ == sim_.steps_done()) return kept_.back();
  // Without -F or --checkpoint-every the directory was not prepared at start-up.
  std::string why;
  if (sim_.mesh().grid().rank() == 0) why = prepare_output_dir(o_.output_dir);
  if (!io::agree(why.empty(), why, sim_.mesh().grid().comm())) throw Error(why);
  return write_checkpoint(false);
}

std::vector<std::string> RunIo::at_failure() {
  std::vector<std::string> out;
  try {
    finish();
    if (o_.checkpoint_every > 0) out.push_back(write_checkpoint(true));
    if (mesh_out_ && last_mesh_ != sim_.steps_done()) {
      write_mesh();
      out.push_back(o_.output_dir + "/" + io::kXdmfIndexName);
    }
  } catch (const Error& e) {
    if (sim_.mesh().grid().rank() == 0) fmt::print(stderr, "beatnik: warning: {}\n", e.what());
  }
  return out;
}

nlohmann::json RunIo::report() const {
  MPI_Comm c = sim_.mesh().grid().comm();
  nlohmann::json j;
  j["hdf5_mode"] = io::to_string(mode_);
  j["mesh_hdf5_mode"] = mesh_out_ ? io::to_string(mesh_out_->mode()) : io::to_string(mode_);
  j["async_output"] = o_.async_output;
  j["parallel_hdf5_built"] = io::parallel_hdf5_built();
  const std::pair<const char*, const Account*> kinds[2] = {{"mesh", &mesh_}, {"checkpoint", &ckpt_}};
  for (const auto& [name, a] : kinds) {
    long v[2] = {a->bytes, a->files};
    double secs[2] = {a->seconds, a->background};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG, MPI_SUM, c);
    MPI_Allreduce(MPI_IN_PLACE, secs, 2, MPI_DOUBLE, MPI_MAX, c);
    // Bandwidth over the time spent writing: the stepping thread's, or the writer thread's.
    const double writing = o_.async_output && a == &mesh_ ? secs[1] : secs[0];
    j[name] = {{"files", v[1]},
               {"bytes", v[0]},
               {"seconds", secs[0]},
               {"GB_per_s", writing > 0 ? double(v[0]) / writing / 1e9 : 0.0}};
    if (o_.async_output && a == &mesh_) j[name]["background_seconds"] = secs[1];
  }
  return j;
}

void print_io_summary(const nlohmann::json& io) {
  if (io["mesh"]["files"].get<long>() == 0 && io["checkpoint"]["files"].get<long>() == 0) return;
  fmt::print("\nOutput (HDF5 {} mode{}; not in the figure of merit)\n", io["mesh_hdf5_mode"].get<std::string>(),
             io["async_output"].get<bool>() ? ", mesh output written in a background thread" : "");
  for (const char* k : {"mesh", "checkpoint"}) {
    const auto& a = io[k];
    if (a["files"].get<long>() == 0) continue;
    fmt::print("  io.{:<14} {:>6} files {:>14} B {:>10.4f} s {:>9.3f} GB/s{}\n", k, a["files"].get<long>(),
               a["bytes"].get<long>(), a["seconds"].get<double>(), a["GB_per_s"].get<double>(),
               a.contains("background_seconds")
                   ? fmt::format("  ({:.4f} s writing behind the steps)", a["background_seconds"].get<double>())
                   : "");
  }
  std::fflush(stdout);
}

}  // namespace beatnik::app
