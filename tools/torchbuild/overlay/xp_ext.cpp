// xp's additions to gotch's C API (see xp_ext.h). Written for xp.
#include "torch_api.h"
#include "xp_ext.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <atomic>
#include <ATen/core/Generator.h>
#include <mutex>
#include <ATen/Version.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>
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

// The key of a parameter's entry in an optimizer's state: its
// TensorImpl's address, printed as c10::guts::to_string prints a pointer
// (libtorch 1.x and 2.0: a std::string key) or as it is (a void* key).
// Printed here rather than through c10::guts, which later libtorch
// versions no longer have.
using XpStateMap = std::remove_reference_t<decltype(std::declval<torch::optim::Optimizer &>().state())>;
using XpStateKey = typename XpStateMap::key_type;

template <class Key = XpStateKey>
static Key xp_state_key(const at::Tensor &p) {
  if constexpr (std::is_same<Key, std::string>::value) {
    std::ostringstream os;
    os << static_cast<const void *>(p.unsafeGetTensorImpl());
    return os.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

// xp_adam_foreach is torch::optim::Adam's step (decoupled false) or
// AdamW's (true) for one parameter group, each of its ops applied to
// every parameter at once: on a GPU a few kernels for the whole model
// instead of about ten per parameter (bert-base has 201), and on the
// CPU, where ATen runs a _foreach_ op as the same op per tensor, the
// very same arithmetic. Parameters without a gradient are skipped, and
// their state is created as the optimizer's own step creates it, so that
// a state saved after either step loads into the other. Parameters at
// different step counts (one skipped a step) are updated in separate
// passes, each with its own bias corrections.
template <class Options, class State>
static void xp_adam_foreach(torch::optim::Optimizer &o, torch::optim::OptimizerParamGroup &group,
                            const Options &opt, bool decoupled) {
  struct Pass {
    std::vector<at::Tensor> params, grads, avg, sq;
  };
  std::map<int64_t, Pass> passes;
  auto &state = o.state();
  for (auto &p : group.params()) {
    if (!p.grad().defined()) {
      continue;
    }
    TORCH_CHECK(!p.grad().is_sparse(), "Adam does not support sparse gradients");
    const auto key = xp_state_key(p);
    if (state.find(key) == state.end()) {
      auto s = std::make_unique<State>();
      s->step(0);
      s->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
      s->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
      state[key] = std::move(s);
    }
    auto &s = static_cast<State &>(*state[key]);
    s.step(s.step() + 1);
    Pass &pass = passes[s.step()];
    pass.params.push_back(p);
    pass.grads.push_back(p.grad());
    pass.avg.push_back(s.exp_avg());
    pass.sq.push_back(s.exp_avg_sq());
  }
  const double lr = opt.lr(), wd = opt.weight_decay(), eps = opt.eps();
  const double beta1 = std::get<0>(opt.betas()), beta2 = std::get<1>(opt.betas());
  for (auto &[step, pass] : passes) {
    const double bias_correction1 = 1 - std::pow(beta1, step);
    const double bias_correction2 = 1 - std::pow(beta2, step);
    std::vector<at::Tensor> grads = pass.grads;
    if (wd != 0 && decoupled) {
      at::_foreach_mul_(pass.params, 1 - lr * wd);
    } else if (wd != 0) {
      grads = at::_foreach_add(pass.grads, pass.params, wd);
    }
    at::_foreach_mul_(pass.avg, beta1);
    at::_foreach_add_(pass.avg, grads, 1 - beta1);
    at::_foreach_mul_(pass.sq, beta2);
    at::_foreach_addcmul_(pass.sq, grads, grads, 1 - beta2);
    std::vector<at::Tensor> denom = at::_foreach_sqrt(pass.sq);
    at::_foreach_div_(denom, std::sqrt(bias_correction2));
    at::_foreach_add_(denom, eps);
    at::_foreach_addcdiv_(pass.params, pass.avg, denom, -(lr / bias_correction1));
  }
}

static void xp_step_foreach(torch::optim::Optimizer &o) {
  torch::NoGradGuard no_grad;
  bool all = true;
  for (auto &group : o.param_groups()) {
    auto *w = dynamic_cast<torch::optim::AdamWOptions *>(&group.options());
    auto *a = dynamic_cast<torch::optim::AdamOptions *>(&group.options());
    all = all && ((w != nullptr && !w->amsgrad()) || (a != nullptr && !a->amsgrad()));
  }
  if (!all) {
    o.step(); // not Adam's arithmetic: the optimizer's own step
    return;
  }
  for (auto &group : o.param_groups()) {
    if (auto *w = dynamic_cast<torch::optim::AdamWOptions *>(&group.options())) {
      xp_adam_foreach<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(o, group, *w, true);
    } else {
      auto *a = dynamic_cast<torch::optim::AdamOptions *>(&group.options());
      xp_adam_foreach<torch::optim::AdamOptions, torch::optim::AdamParamState>(o, group, *a, false);
    }
  }
}

int xp_optimizer_step_foreach(optimizer o) {
  PROTECT(xp_step_foreach(*o); return 0;)
  return -1;
}

static std::vector<at::Tensor> xp_tensors(tensor *tensors, int n) {
  std::vector<at::Tensor> v;
  v.reserve(n);
  for (int i = 0; i < n; ++i) {
    v.push_back(*tensors[i]);
  }
  return v;
}

int xp_foreach_mul_scalar_(tensor *tensors, int n, double s) {
  PROTECT(
    std::vector<at::Tensor> v = xp_tensors(tensors, n);
    at::_foreach_mul_(v, s);
    return 0;
  )
  return -1;
}

int xp_foreach_mul_tensor_(tensor *tensors, int n, tensor s) {
  PROTECT(
    std::vector<at::Tensor> v = xp_tensors(tensors, n);
    if (v.empty()) {
      return 0;
    }
    // In the tensors' type, as a product with a scalar of another type
    // would compute it.
    const at::Tensor f = s->to(v[0].scalar_type());
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    at::_foreach_mul_(v, f);
#else
    for (auto &t : v) {
      t.mul_(f); // no multi-tensor product by a tensor before libtorch 2.1
    }
#endif
    return 0;
  )
  return -1;
}

int xp_foreach_total_norm(tensor *tensors, int n, double p, tensor *out) {
  PROTECT(
    TORCH_CHECK(n > 0, "the norm of no tensors");
    std::vector<at::Tensor> norms = at::_foreach_norm(xp_tensors(tensors, n), p);
    at::Tensor all = at::stack(norms).to(at::kDouble);
    at::Tensor total = std::isinf(p) ? all.max() : at::linalg_vector_norm(all, p);
    *out = new torch::Tensor(total);
    return 0;
  )
  return -1;
}

// The operator count (xp_count_ops_start): a global RecordFunction
// callback on ATen's operators; an operator is counted when no other is
// running on its thread (linear's addmm, or the per-tensor ops of a
// multi-tensor op on the CPU, are inside another and not counted).
static std::mutex xp_count_mu;
static at::CallbackHandle xp_count_handle = at::INVALID_CALLBACK_HANDLE;
static std::atomic<int64_t> xp_count{0};
static thread_local int xp_count_depth = 0;

static std::unique_ptr<at::ObserverContext> xp_count_enter(const at::RecordFunction &) {
  if (xp_count_depth++ == 0) {
    xp_count.fetch_add(1, std::memory_order_relaxed);
  }
  return nullptr;
}

static void xp_count_leave(const at::RecordFunction &, at::ObserverContext *) { --xp_count_depth; }

int xp_count_ops_start(void) {
  PROTECT(
    std::lock_guard<std::mutex> lock(xp_count_mu);
    TORCH_CHECK(xp_count_handle == at::INVALID_CALLBACK_HANDLE, "an operator count is already running");
    xp_count.store(0);
    xp_count_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(xp_count_enter, xp_count_leave).scopes({at::RecordScope::FUNCTION}));
    return 0;
  )
  return -1;
}

int64_t xp_count_ops_stop(void) {
  std::lock_guard<std::mutex> lock(xp_count_mu);
  if (xp_count_handle == at::INVALID_CALLBACK_HANDLE) {
    return -1;
  }
  at::removeCallback(xp_count_handle);
  xp_count_handle = at::INVALID_CALLBACK_HANDLE;
  return xp_count.load();
}
