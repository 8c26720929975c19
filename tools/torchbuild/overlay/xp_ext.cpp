// xp's additions to gotch's C API (see xp_ext.h). Written for xp.
#include "torch_api.h"
#include "xp_ext.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/Parallel.h>
#include <ATen/core/Generator.h>
#include <mutex>
#include <ATen/Version.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <dlfcn.h>
#include <torch/version.h>

char *xp_torch_version(void) { return strdup(TORCH_VERSION); }

char *xp_torch_config(void) {
  PROTECT(return strdup(at::show_config().c_str());)
  return nullptr;
}

char *xp_torch_library(void) {
  Dl_info info;
  void *sym = reinterpret_cast<void *>(&at::get_num_threads);
  if (dladdr(sym, &info) != 0 && info.dli_fname != nullptr) {
    return strdup(info.dli_fname);
  }
  torch_last_err = strdup("dladdr found no library for at::get_num_threads");
  return nullptr;
}

// The state is serialized in memory and handed to Go, which writes it
// through a temporary file and a rename (internal/xio): torch::save
// straight to a file on a full disk throws from PytorchStreamWriter's
// destructor, which terminates the process ("terminate called after
// throwing an instance of c10::Error"), and a writer here would have to
// clean up after itself without removing what it did not create.
// xp_bytes_out copies bytes into a malloc'ed buffer the caller frees.
static void xp_bytes_out(const std::string &bytes, char **data, int64_t *len) {
  char *out = static_cast<char *>(std::malloc(bytes.size() > 0 ? bytes.size() : 1));
  if (out == nullptr) {
    throw std::runtime_error("out of memory for " + std::to_string(bytes.size()) + " serialized bytes");
  }
  std::memcpy(out, bytes.data(), bytes.size());
  *data = out;
  *len = static_cast<int64_t>(bytes.size());
}

int xp_optimizer_serialize(optimizer o, char **data, int64_t *len) {
  PROTECT(
    std::ostringstream buf;
    torch::save(*o, buf);
    xp_bytes_out(buf.str(), data, len);
    return 0;
  )
  return -1;
}

// The archive at_save_multi writes to a file (a model's parameters,
// nn.VarStore.Save), serialized in memory instead, for the same reason.
int xp_save_multi_serialize(tensor *tensors, char **names, int ntensors, char **data, int64_t *len) {
  PROTECT(
    torch::serialize::OutputArchive archive;
    for (int i = 0; i < ntensors; ++i) {
      archive.write(std::string(names[i]), *(tensors[i]), /*buffer=*/false);
    }
    std::ostringstream buf;
    archive.save_to(buf);
    xp_bytes_out(buf.str(), data, len);
    return 0;
  )
  return -1;
}

int xp_optimizer_load(optimizer o, const char *path) {
  PROTECT(torch::load(*o, std::string(path)); return 0;)
  return -1;
}

static at::Generator xp_generator(int cuda, int index) {
  if (cuda) {
    return at::globalContext().defaultGenerator(
        c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)));
  }
  return at::detail::getDefaultCPUGenerator();
}

int xp_rng_get_state(int cuda, int index, tensor *out) {
  PROTECT(
    at::Generator g = xp_generator(cuda, index);
    std::lock_guard<std::mutex> lock(g.mutex());
    *out = new torch::Tensor(g.get_state());
    return 0;
  )
  return -1;
}

int xp_rng_set_state(int cuda, int index, tensor state) {
  PROTECT(
    at::Generator g = xp_generator(cuda, index);
    std::lock_guard<std::mutex> lock(g.mutex());
    g.set_state(*state);
    return 0;
  )
  return -1;
}

// Automatic mixed precision, as torch.autocast: on the calling thread,
// eligible ops (matrix products, linear layers) on the device type run in
// dtype while the rest stay float32. Disabling clears autocast's cache of
// cast weights, which an optimizer step makes stale.
int xp_autocast(int cuda, int enabled, int dtype) {
  PROTECT(
    const at::DeviceType dt = cuda ? at::kCUDA : at::kCPU;
    const auto st = static_cast<at::ScalarType>(dtype);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    if (enabled) {
      at::autocast::set_autocast_dtype(dt, st);
    }
    at::autocast::set_autocast_enabled(dt, enabled != 0);
#else
    if (cuda) {
      if (enabled) {
        at::autocast::set_autocast_gpu_dtype(st);
      }
      at::autocast::set_enabled(enabled != 0);
    } else {
      if (enabled) {
        at::autocast::set_autocast_cpu_dtype(st);
      }
      at::autocast::set_cpu_enabled(enabled != 0);
    }
#endif
    if (!enabled) {
      at::autocast::clear_cache();
    }
    return 0;
  )
  return -1;
}

int xp_autocast_enabled(int cuda) {
  const at::DeviceType dt = cuda ? at::kCUDA : at::kCPU;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::is_autocast_enabled(dt) ? 1 : 0;
#else
  return (cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled()) ? 1 : 0;
#endif
}
