// xp's additions to gotch's C API (see xp_ext.h). Written for xp.
#include "torch_api.h"
#include "xp_ext.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <cstring>
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
