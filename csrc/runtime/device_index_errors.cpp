#include "runtime/device_index_errors.h"

#include <atomic>
#include <mutex>

#include "exceptions.h"

namespace nvfuser {
namespace device_index_errors {
namespace {
std::atomic<int*> gWord{nullptr};
}  // namespace

int* word() {
  int* w = gWord.load();
  if (w != nullptr) {
    return w;
  }
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (gWord.load() == nullptr) {
    // Never freed: a static tensor would be destroyed after the CUDA
    // context at exit.
    auto* t = new at::Tensor(at::zeros(
        {1}, at::TensorOptions().dtype(at::kInt).pinned_memory(true)));
    gWord.store(t->data_ptr<int>());
  }
  return gWord.load();
}

at::Tensor wordOn(const at::Device& device) {
  return at::from_blob(word(), {1},
                       at::TensorOptions().dtype(at::kInt).device(device));
}

void throwIfSet(const char* when) {
  int* w = gWord.load();
  if (w == nullptr) {
    return;
  }
  volatile int* v = w;
  if (*v == 0) {
    return;
  }
  *v = 0;
  NVF_THROW(Index, "a gather (index_select, gather, take_along_axis or an ",
            "embedding) launched ", when,
            " read an index out of range on the GPU; it read 0 there. ",
            "NVFUSER_ENABLE=sync_index_checks raises at that launch itself");
}

}  // namespace device_index_errors
}  // namespace nvfuser
