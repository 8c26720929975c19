/* xp's additions to gotch's C API: what gotch v0.9.1 does not bind.
 * Written for xp (tools/torchbuild); compiled into libxptorch.so. */
#ifndef XP_EXT_H
#define XP_EXT_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Each returns a malloc'ed string the caller frees, or NULL with the
 * thread's last error set. */
char *xp_torch_version(void); /* TORCH_VERSION of the headers built against */
char *xp_torch_config(void);  /* at::show_config(): build options, BLAS, CUDA */
char *xp_torch_library(void); /* path of the libtorch_cpu actually loaded */
#ifdef __cplusplus
}
#endif
#endif
