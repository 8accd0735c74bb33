#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

#include "exceptions.h"

namespace nvfuser {

namespace {
template <typename Fn>
void bind(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  NVF_CHECK_KIND(fn != nullptr, Runtime, "the CUDA driver has no ", name);
}
}  // namespace

CudaDriver::CudaDriver() {
  handle_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  NVF_CHECK_KIND(handle_ != nullptr, Runtime,
                 "cannot load the CUDA driver (libcuda.so.1): ", dlerror());
  bind(handle_, "cuInit", cuInit_);
  bind(handle_, "cuDeviceGet", cuDeviceGet_);
  bind(handle_, "cuDeviceGetAttribute", cuDeviceGetAttribute_);
  bind(handle_, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain_);
  bind(handle_, "cuCtxGetCurrent", cuCtxGetCurrent_);
  bind(handle_, "cuCtxSetCurrent", cuCtxSetCurrent_);
  bind(handle_, "cuModuleLoadData", cuModuleLoadData_);
  bind(handle_, "cuModuleGetFunction", cuModuleGetFunction_);
  bind(handle_, "cuModuleUnload", cuModuleUnload_);
  bind(handle_, "cuCtxSynchronize", cuCtxSynchronize_);
  bind(handle_, "cuLaunchKernel", cuLaunchKernel_);
  bind(handle_, "cuGetErrorString", cuGetErrorString_);
  bind(handle_, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
       cuOccupancyMaxActiveBlocksPerMultiprocessor_);
  bind(handle_, "cuEventCreate", cuEventCreate_);
  bind(handle_, "cuEventRecord", cuEventRecord_);
  bind(handle_, "cuEventSynchronize", cuEventSynchronize_);
  bind(handle_, "cuEventDestroy_v2", cuEventDestroy_);
  // _v2 from CUDA 12.8 on; the first version before.
  if (dlsym(handle_, "cuEventElapsedTime_v2") != nullptr) {
    bind(handle_, "cuEventElapsedTime_v2", cuEventElapsedTime_);
  } else {
    bind(handle_, "cuEventElapsedTime", cuEventElapsedTime_);
  }
  check(cuInit_(0), "cuInit");
}

CudaDriver& CudaDriver::get() {
  static CudaDriver driver;
  return driver;
}

bool CudaDriver::available() {
  static const bool ok = [] {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return h != nullptr;
  }();
  return ok;
}

void CudaDriver::check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) {
    return;
  }
  const char* msg = "unknown error";
  if (cuGetErrorString_ != nullptr) {
    cuGetErrorString_(r, &msg);
  }
  NVF_THROW(Runtime, "CUDA driver call ", what, " failed: ", msg);
}

void CudaDriver::ensureContext(int device) {
  CUcontext primary = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = primary_.find(device);
    if (it == primary_.end()) {
      CUdevice dev;
      check(cuDeviceGet_(&dev, device), "cuDeviceGet");
      check(cuDevicePrimaryCtxRetain_(&primary, dev),
            "cuDevicePrimaryCtxRetain");
      primary_[device] = primary;
    } else {
      primary = it->second;
    }
  }
  CUcontext current = nullptr;
  check(cuCtxGetCurrent_(&current), "cuCtxGetCurrent");
  if (current != primary) {
    check(cuCtxSetCurrent_(primary), "cuCtxSetCurrent");
  }
}

std::string CudaDriver::archOf(int device) {
  CUdevice dev;
  check(cuDeviceGet_(&dev, device), "cuDeviceGet");
  int major = 0;
  int minor = 0;
  check(cuDeviceGetAttribute_(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute");
  check(cuDeviceGetAttribute_(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute");
  return "sm_" + std::to_string(major * 10 + minor);
}

int CudaDriver::residentBlocks(CUfunction f, int block) {
  int n = 0;
  check(cuOccupancyMaxActiveBlocksPerMultiprocessor_(&n, f, block, 0),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return n;
}

int CudaDriver::multiprocessorCount(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = multiprocessors_.find(device);
  if (it != multiprocessors_.end()) {
    return it->second;
  }
  CUdevice dev;
  check(cuDeviceGet_(&dev, device), "cuDeviceGet");
  int n = 0;
  check(
      cuDeviceGetAttribute_(&n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
      "cuDeviceGetAttribute");
  multiprocessors_[device] = n;
  return n;
}

CUfunction CudaDriver::loadFunction(const std::vector<char>& cubin,
                                    const std::string& name, CUmodule* module) {
  check(cuModuleLoadData_(module, cubin.data()), "cuModuleLoadData");
  CUfunction f;
  CUresult r = cuModuleGetFunction_(&f, *module, name.c_str());
  if (r != CUDA_SUCCESS) {
    cuModuleUnload_(*module);
    check(r, "cuModuleGetFunction");
  }
  return f;
}

void CudaDriver::synchronize(int device) {
  ensureContext(device);
  check(cuCtxSynchronize_(), "cuCtxSynchronize");
}

void CudaDriver::unloadModule(int device, CUmodule module) {
  synchronize(device);
  check(cuModuleUnload_(module), "cuModuleUnload");
}

void CudaDriver::launch(CUfunction f, unsigned grid, unsigned block,
                        CUstream stream, std::vector<void*>& args) {
  check(cuLaunchKernel_(f, grid, 1, 1, block, 1, 1, 0, stream, args.data(),
                        nullptr),
        "cuLaunchKernel");
}

CUevent CudaDriver::recordEvent(int device, CUstream stream) {
  ensureContext(device);
  CUevent e = nullptr;
  check(cuEventCreate_(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cuEventRecord_(e, stream), "cuEventRecord");
  return e;
}

float CudaDriver::elapsedMs(CUevent start, CUevent end) {
  check(cuEventSynchronize_(end), "cuEventSynchronize");
  float ms = 0;
  check(cuEventElapsedTime_(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

void CudaDriver::destroyEvent(CUevent e) {
  if (e != nullptr) {
    cuEventDestroy_(e);
  }
}

}  // namespace nvfuser
