// xp's additions to gotch's C API (see xp_ext.h). Written for xp.
#include "torch_api.h"
#include "xp_ext.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/Generator.h>
#include <mutex>
#include <ATen/Version.h>
#include <cerrno>
#include <cstdio>
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

// The state is serialized in memory first, then written and flushed with
// every error checked: torch::save straight to a file on a full disk
// throws from PytorchStreamWriter's destructor, which terminates the
// process ("terminate called after throwing an instance of c10::Error").
int xp_optimizer_save(optimizer o, const char *path) {
  PROTECT(
    std::ostringstream buf;
    torch::save(*o, buf);
    const std::string bytes = buf.str();
    std::FILE *f = std::fopen(path, "wb");
    if (f == nullptr) {
      throw std::runtime_error(std::string("open ") + path + ": " + std::strerror(errno));
    }
    const size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
    int err = (n == bytes.size()) ? 0 : errno;
    if (std::fflush(f) != 0 && err == 0) {
      err = errno;
    }
    if (std::fclose(f) != 0 && err == 0) {
      err = errno;
    }
    if (err != 0 || n != bytes.size()) {
      std::remove(path);
      throw std::runtime_error(std::string("write ") + path + ": " + std::strerror(err != 0 ? err : EIO));
    }
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
