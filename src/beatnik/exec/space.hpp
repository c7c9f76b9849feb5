#pragma once
// Where data lives and kernels run. Chosen at run time (-x host|cuda).
#include <cstddef>
#include <string>

namespace beatnik::exec {

enum class Space { Host, Device };

inline const char* to_string(Space s) { return s == Space::Host ? "host" : "cuda"; }

// True when this binary was compiled with the CUDA backend.
bool cuda_built();

// Number of visible GPUs (0 when not built with CUDA or none present).
int device_count();

// Select the GPU this process uses.
void set_device(int id);

// The GPU the calling thread uses (−1 without the CUDA backend or on error). A thread of the
// process's own starts on GPU 0: a worker thread that launches work sets this one first.
int current_device();

// GPU of a rank: `override_id` if >= 0, else the environment variable BEATNIK_GPU_ID if set,
// else, with ranks_per_gpu K > 0, GPU node_local_rank / K (K consecutive node-local ranks share
// one GPU), else node_local_rank modulo the visible GPUs. Selects it and returns its id. Throws
// NotAvailable when no GPU is visible or the id does not exist (for K, alike on every rank of
// the node: node_local_size ranks need ceil(node_local_size / K) GPUs), InputError for a
// malformed BEATNIK_GPU_ID.
int bind_device(int node_local_rank, int override_id, int ranks_per_gpu = 0, int node_local_size = 1);

// The selected GPU's name and memory (free and total bytes, as the driver reports them).
std::string device_name();
void device_memory(std::size_t& free_bytes, std::size_t& total_bytes);

// Wait until all work queued in this space has finished.
void fence(Space s);

// Host-side OpenMP thread count that parallel_for uses.
int host_threads();

}  // namespace beatnik::exec
