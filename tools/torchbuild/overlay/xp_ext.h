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

/* Training checkpoints. Each returns 0, or -1 with the thread's last error
 * set. The optimizer's state (Adam's moments and step counts) is serialized
 * in libtorch's format (torch::save) into a malloc'ed buffer the caller
 * frees (*data, *len bytes); the generator's state is
 * the byte tensor at::Generator::get_state returns (CPU generator when
 * cuda is 0, else that of GPU index). */
int xp_optimizer_serialize(optimizer o, char **data, int64_t *len);
/* The named tensors as at_save_multi writes them, into a malloc'ed buffer. */
int xp_save_multi_serialize(tensor *tensors, char **names, int ntensors, char **data, int64_t *len);
int xp_optimizer_load(optimizer o, const char *path);
int xp_rng_get_state(int cuda, int index, tensor *out);
int xp_rng_set_state(int cuda, int index, tensor state);
/* Automatic mixed precision on the calling thread (torch.autocast): on
 * the CPU (cuda 0) or CUDA, eligible ops run in dtype (a c10::ScalarType:
 * 15 bfloat16, 5 float16) while enabled; disabling clears the cache of
 * cast weights. Returns 0, or -1 with the thread's last error set.
 * xp_autocast_enabled says whether it is on (1) for that device type. */
int xp_autocast(int cuda, int enabled, int dtype);
int xp_autocast_enabled(int cuda);
/* The optimizer's step over all its parameters at once, through ATen's
 * multi-tensor (_foreach_) ops: for Adam and AdamW (without amsgrad) the
 * arithmetic of torch::optim's own step, op for op, so that on the CPU
 * every bit is the same; any other optimizer takes its own step.
 * Returns 0, or -1 with the thread's last error set. */
int xp_optimizer_step_foreach(optimizer o);
/* Each of the n tensors times s, in place, in one multi-tensor op. */
int xp_foreach_mul_scalar_(tensor *tensors, int n, double s);
/* Each of the n tensors times the one-element tensor s, in place. */
int xp_foreach_mul_tensor_(tensor *tensors, int n, tensor s);
/* *out: the norm of order p (inf: the largest |x|) of the n tensors
 * together, a float64 scalar tensor on their device, from each tensor's
 * norm in its own type (_foreach_norm), as torch.nn.utils.clip_grad_norm_
 * computes it; nothing is read back. */
int xp_foreach_total_norm(tensor *tensors, int n, double p, tensor *out);
/* Counting the ATen operators dispatched from outside any other (what a
 * host issues: on a GPU, each is a kernel launch or a few), on every
 * thread, between xp_count_ops_start and xp_count_ops_stop; one count at
 * a time. start returns 0, or -1 with the thread's last error set (a
 * count already running); stop returns the count, or -1 when none ran. */
int xp_count_ops_start(void);
int64_t xp_count_ops_stop(void);
#ifdef __cplusplus
}
#endif
#endif
