// Package torchrt owns xp's contact with the libtorch runtime beyond what
// gotch offers: choosing a device from a config string, seeding libtorch's
// generators, setting its thread count, running tensor code on a locked OS
// thread with errors instead of crashes, and describing the installation
// (versions, paths, BLAS, CUDA) for provenance and `xp doctor`.
//
// gotch keeps its last error in a thread-local slot and libtorch keeps grad
// mode per thread, so every function here that touches tensors expects to
// run inside Do, which pins the goroutine to one OS thread.
//
// The libtorch that is linked is prepared by tools/torchbuild (run make);
// Build reports what it built against and which gotch bindings it had to
// stub for this libtorch.
package torchrt
