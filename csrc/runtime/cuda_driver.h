// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so
// every binary starts on machines without a GPU.
#pragma once

#include <cuda.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace nvfuser {

class CudaDriver {
 public:
  // The process-wide driver; throws a RuntimeError naming what is missing
  // when libcuda.so.1 cannot be loaded.
  static CudaDriver& get();
  static bool available();

  // Makes the device's primary context current (PyTorch uses the same one).
  // The context is retained once per device, not once per call.
  void ensureContext(int device);
  // "sm_90" for the device.
  std::string archOf(int device);
  int multiprocessorCount(int device);
  // Blocks of `block` threads of f that fit on one multiprocessor at once.
  int residentBlocks(CUfunction f, int block);
  // Loads the cubin as a module of the current context and finds `name` in
  // it; the module stays loaded until unloadModule.
  CUfunction loadFunction(const std::vector<char>& cubin,
                          const std::string& name, CUmodule* module);
  // Waits for all of the device's work.
  void synchronize(int device);
  // Waits for the device's work (a module may be unloaded only when none of
  // its kernels can still run), then unloads.
  void unloadModule(int device, CUmodule module);
  void launch(CUfunction f, unsigned grid, unsigned block, CUstream stream,
              std::vector<void*>& args);
  // A new event recorded on `stream` (destroy it with destroyEvent).
  CUevent recordEvent(int device, CUstream stream);
  // Milliseconds between two recorded events; waits for `end`.
  float elapsedMs(CUevent start, CUevent end);
  void destroyEvent(CUevent e);

 private:
  CudaDriver();
  void check(CUresult r, const char* what);
  std::mutex mutex_;
  std::map<int, CUcontext> primary_;  // retained once, kept for the process
  std::map<int, int> multiprocessors_;
  void* handle_ = nullptr;
  CUresult (*cuInit_)(unsigned) = nullptr;
  CUresult (*cuDeviceGet_)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetAttribute_)(int*, CUdevice_attribute,
                                    CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain_)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxGetCurrent_)(CUcontext*) = nullptr;
  CUresult (*cuCtxSetCurrent_)(CUcontext) = nullptr;
  CUresult (*cuModuleLoadData_)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleGetFunction_)(CUfunction*, CUmodule,
                                   const char*) = nullptr;
  CUresult (*cuModuleUnload_)(CUmodule) = nullptr;
  CUresult (*cuCtxSynchronize_)() = nullptr;
  CUresult (*cuLaunchKernel_)(CUfunction, unsigned, unsigned, unsigned,
                              unsigned, unsigned, unsigned, unsigned, CUstream,
                              void**, void**) = nullptr;
  CUresult (*cuGetErrorString_)(CUresult, const char**) = nullptr;
  CUresult (*cuEventCreate_)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord_)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize_)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime_)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuEventDestroy_)(CUevent) = nullptr;
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor_)(int*, CUfunction,
                                                           int,
                                                           size_t) = nullptr;
};

}  // namespace nvfuser
