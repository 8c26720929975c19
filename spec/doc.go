// Package spec owns what can be asked for: for every mechanism, model kind
// and analysis kind, a Descriptor — its name, one-line docs, privacy
// notion, whether it takes ε and a dataset, and its typed parameters with
// defaults, allowed ranges and whether a config may sweep them. Each rule
// (ε > 0 and finite, t ∈ [0, 1], rank ≥ 1, …) is written once, here, as
// data.
//
// The config validator (experiments), the constructors (mech.New,
// models.New), the command line's help and the parameter tables of
// docs/config.md all read these descriptors. The package is plain Go with
// no dependency beyond the standard library, so that anything may import
// it without pulling in libtorch.
package spec
