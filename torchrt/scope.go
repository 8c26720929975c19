package torchrt

import "github.com/sugarme/gotch/ts"

// Scope collects the tensors a function makes so that one deferred call
// frees them all:
//
//	var s torchrt.Scope
//	defer s.Drop()
//	x, err := s.Keep(a.Matmul(b, false))
//
// Drop has a pointer receiver so that the deferred call sees the tensors
// kept after the defer statement; with a value receiver it would copy the
// still-empty slice and leave every tensor to Go's finalizers, which run
// only when Go's heap grows and never see device memory.
type Scope []*ts.Tensor

// Keep adds t to the scope (unless err is set) and passes both through.
func (s *Scope) Keep(t *ts.Tensor, err error) (*ts.Tensor, error) {
	if err == nil && t != nil {
		*s = append(*s, t)
	}
	return t, err
}

// Drop frees the tensors kept so far.
func (s *Scope) Drop() {
	for _, t := range *s {
		t.Drop()
	}
	*s = nil
}
