package rundir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
)

// MarkerName is the file by which a folder is xp's run folder: written by
// xp when it first runs into the folder, never by the presence of names a
// user's folder may hold as well (a manifest.json, a cells folder).
const MarkerName = ".xp-run"

// Marker is the content of the marker: its format's version and a random
// id, which tells one run folder from another.
type Marker struct {
	Version int    `json:"xp_run"`
	ID      string `json:"id"`
}

// ReadMarker reads dir's marker: ok is false when there is none; an error
// when there is one that is not a regular file of xp's marker.
func ReadMarker(dir string) (m Marker, ok bool, err error) {
	path := filepath.Join(dir, MarkerName)
	b, err := xio.ReadFileMax(path, 4<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Version < 1 || m.ID == "" {
		return m, false, fmt.Errorf("%s is not xp's run marker", path)
	}
	return m, true, nil
}

// WriteMarker writes dir's marker unless it has one.
func WriteMarker(dir string) error {
	if _, ok, err := ReadMarker(dir); ok || err != nil {
		return err
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return err
	}
	b, _ := json.Marshal(Marker{Version: 1, ID: hex.EncodeToString(id)})
	return xio.WriteFileAtomic(filepath.Join(dir, MarkerName), append(b, '\n'))
}

// IsRun reports whether dir is one of xp's run folders: it holds xp's
// marker, or — a run written before markers — both a plan and a resolved
// config that xp can read.
func IsRun(dir string) bool {
	if _, ok, err := ReadMarker(dir); ok || err != nil {
		return ok
	}
	if _, err := xio.Regular(filepath.Join(dir, PlanName)); err != nil {
		return false
	}
	_, _, err := experiments.ReadSource(filepath.Join(dir, ResolvedName))
	return err == nil
}
