#include "beatnik/app/provenance.hpp"

#include <fftw3.h>
#include <mpi.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "beatnik/build_info.hpp"
#include "beatnik/exec/space.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(BEATNIK_WITH_NCCL)
#include <nccl.h>
#endif

namespace beatnik::app {

std::string mpi_library_version() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, len);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s.substr(0, s.find('\n'));
}

nlohmann::json provenance(const std::vector<std::string>& argv, const std::vector<std::string>& hosts) {
  nlohmann::json p;
  p["program"] = "beatnik";
  p["version"] = build::version;
  p["git_revision"] = build::git_revision;
  p["build_type"] = build::build_type;
  p["compiler"] = build::cxx_compiler;
  p["mpi_library"] = mpi_library_version();
  p["fftw"] = std::string(fftw_version);
  p["cuda_backend"] = exec::cuda_built();
#if defined(BEATNIK_WITH_CUDA)
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  p["cuda_runtime"] = rt;
  p["cuda_driver"] = drv;
  nlohmann::json gpus = nlohmann::json::array();
  for (int d = 0; d < exec::device_count(); ++d) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) gpus.push_back(prop.name);
  }
  p["gpus"] = gpus;
#endif
#if defined(BEATNIK_WITH_NCCL)
  int nv = 0;
  ncclGetVersion(&nv);
  p["nccl"] = nv;
#endif
  p["command_line"] = argv;
  std::set<std::string> unique(hosts.begin(), hosts.end());
  p["hosts"] = std::vector<std::string>(unique.begin(), unique.end());
  char stamp[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  p["date_utc"] = stamp;
  return p;
}

}  // namespace beatnik::app
