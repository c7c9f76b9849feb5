// A CUPTI activity tracer for GPU timelines (scripts/gpu-trace.sh; measurement only, not part of
// the build): loaded into a CUDA program through CUDA_INJECTION64_PATH, it records every kernel
// and memory copy (device start and end in ns, stream, kernel name or copy kind and bytes), and
// every CUDA runtime call of at least kApiNs on the host (where the host waits for the device:
// its start and end on the same clock, its thread as the stream, its name), and writes them at
// exit as CSV lines "kind,start,end,stream,name" (kind 0: kernel, 1: copy, 2: runtime call) to
// $BEATNIK_TRACE_OUT.<pid>.csv. scripts/gpu_trace_report.py reads them.
#include <cupti.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Record {
  unsigned long long start, end;
  unsigned stream;
  int kind;
  std::string name;
};

std::vector<Record>* records = new std::vector<Record>;  // (never freed: read at exit)
std::mutex records_mutex;
constexpr size_t kBufferBytes = 8 << 20;
constexpr unsigned long long kApiNs = 100000;  // runtime calls shorter than 0.1 ms are not kept

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = kBufferBytes;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, kBufferBytes));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  std::lock_guard<std::mutex> lock(records_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
      records->push_back({k->start, k->end, k->streamId, 0, k->name ? k->name : "?"});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      records->push_back({m->start, m->end, m->streamId, 1,
                          "copy" + std::to_string(int(m->copyKind)) + ":" + std::to_string(m->bytes)});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
      if (a->end - a->start < kApiNs) continue;
      const char* name = nullptr;
      if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name) != CUPTI_SUCCESS || !name) name = "?";
      records->push_back({a->start, a->end, a->threadId, 2, name});
    }
  }
  free(buffer);
}

void write_records() {
  cuptiActivityFlushAll(1);
  const char* prefix = getenv("BEATNIK_TRACE_OUT");
  if (!prefix || records->empty()) return;
  const std::string path = std::string(prefix) + "." + std::to_string(getpid()) + ".csv";
  FILE* f = fopen(path.c_str(), "w");
  if (!f) {
    fprintf(stderr, "cupti_trace: cannot write %s\n", path.c_str());
    return;
  }
  for (const Record& r : *records) fprintf(f, "%d,%llu,%llu,%u,%s\n", r.kind, r.start, r.end, r.stream, r.name.c_str());
  fclose(f);
  fprintf(stderr, "cupti_trace: %zu records in %s\n", records->size(), path.c_str());
}

}  // namespace

extern "C" int InitializeInjection(void) {
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS) {
    fprintf(stderr, "cupti_trace: CUPTI activity tracing could not be enabled\n");
    return 0;
  }
  atexit(write_records);
  return 1;
}
