package datasets

import (
	"testing"

	"github.com/xp-nlp/xp/internal/realdata"
)

// TestDataRootVariable: the tests' data root (realdata) and the loaders'
// are one variable.
func TestDataRootVariable(t *testing.T) {
	if EnvRoot != realdata.Env {
		t.Errorf("datasets reads %s, the tests %s", EnvRoot, realdata.Env)
	}
}
