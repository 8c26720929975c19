package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/rundir"
)

// systemFolders are the folders of the system that no run is written
// into, nor into any folder inside them; systemRoots those that no run is
// written into as they are (a run inside them, /tmp/study or
// /home/me/runs, is the user's).
var (
	systemFolders = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/sys", "/usr"}
	systemRoots   = []string{"/", "/home", "/media", "/mnt", "/opt", "/root", "/run", "/srv", "/tmp", "/var"}
)

// ownOutput refuses, before anything is written, an output folder xp does
// not own: a folder of the system, the user's home, a folder that holds
// files and is no xp run (its report.html, tables/ and plots/ would be
// replaced: a run folder is one xp marked, rundir.IsRun), or a run of
// another config. A run whose resolved config is
// damaged is identified by its plan instead; when neither can be read the
// message says how to keep its records.
func ownOutput(c *experiments.Config) error {
	abs, err := filepath.Abs(c.Output)
	if err != nil {
		return c.ErrAt(fmt.Sprintf("output %s: %v", c.Output, err), "output")
	}
	if why := systemFolder(abs); why != "" {
		return c.ErrAt(fmt.Sprintf("output %s is %s: give the run a folder of its own", c.Output, why), "output")
	}
	entries, err := os.ReadDir(c.Output)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if fi, serr := os.Stat(c.Output); serr == nil && !fi.IsDir() {
			return c.ErrAt(fmt.Sprintf("output %s is a file, not a folder", c.Output), "output")
		}
		return nil // unreadable or unreachable: the writable check says why
	case len(entries) == 0:
		return nil
	}
	// A run folder is one xp marked as its own (rundir.IsRun), not one
	// that merely holds a name a run holds too (a user's manifest.json or
	// cells folder); a folder with nothing but xp's lock is one xp made.
	if !rundir.IsRun(c.Output) && slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() != LockName && !xio.IsTemp(e.Name()) }) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return c.ErrAt(fmt.Sprintf("output %s holds files that are no xp run (%s): give the run an empty or new folder", c.Output, someNames(names)), "output")
	}
	return sameSource(c)
}

// systemFolder says why abs (an absolute path) is no folder for xp to
// write into — a system folder, a folder inside one, a system root or the
// user's home, as named or once its symbolic links are followed (a link
// to /etc is /etc) — or "" when it may be.
func systemFolder(abs string) string {
	home, _ := os.UserHomeDir()
	if home != "" {
		home = resolveExisting(filepath.Clean(home))
	}
	for _, p := range slices.Compact([]string{abs, resolveExisting(abs)}) {
		link := ""
		if p != abs {
			link = ", through a link: " + p
		}
		for _, s := range systemFolders {
			if p == s || strings.HasPrefix(p, s+"/") {
				return fmt.Sprintf("a system folder (inside %s%s)", s, link)
			}
		}
		if slices.Contains(systemRoots, p) || (home != "" && p == home) {
			if link != "" {
				return "a system or home folder (" + link[2:] + ")"
			}
			return "a system or home folder"
		}
	}
	return ""
}

// cacheNames are what xp keeps in a cache folder.
var cacheNames = []string{"corpora", "mech", "embeddings", modelsDir, checkpointsDir, drawsDir, "tmp", ratesFile}

// ownCache refuses, before anything is written, a cache folder xp does
// not own: a system or home folder (as named or through a link), or a
// folder holding anything but what xp keeps in a cache (a user's
// rates.json among other files would be replaced).
func ownCache(c *experiments.Config) error {
	abs, err := filepath.Abs(c.Cache)
	if err != nil {
		return c.ErrAt(fmt.Sprintf("cache %s: %v", c.Cache, err), "cache")
	}
	if why := systemFolder(abs); why != "" {
		return c.ErrAt(fmt.Sprintf("cache %s is %s: give xp a cache folder of its own (runs/cache by default)", c.Cache, why), "cache")
	}
	entries, err := os.ReadDir(c.Cache)
	if err != nil {
		return nil // missing (made by the writable check) or unreadable (which says why)
	}
	var foreign []string
	for _, e := range entries {
		if !slices.Contains(cacheNames, e.Name()) && !xio.IsTemp(e.Name()) {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		return c.ErrAt(fmt.Sprintf("cache %s holds files that are not xp's cache (%s): give xp an empty or new folder", c.Cache, someNames(foreign)), "cache")
	}
	return nil
}

// someNames lists the first three names of a folder a message refuses,
// "…" for the rest.
func someNames(names []string) string {
	if len(names) > 3 {
		names = append(names[:3:3], "…")
	}
	return strings.Join(names, ", ")
}

// resolveExisting is abs with the symbolic links of its longest existing
// part followed (the rest, not yet made, appended as it is).
func resolveExisting(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// sameSource refuses an output folder that holds a run of another config
// (another source file, or another name): its tables and plots would be
// replaced by this config's without a word. The same config file, edited
// (a seed or an ε added), may run again in its folder: that is how a sweep
// grows, and the tables then cover the edited config's cells. The run is
// identified by its resolved config, or by its plan's config name where
// that is damaged; its records are never what is removed.
func sameSource(c *experiments.Config) error {
	name, file, err := experiments.ReadSource(filepath.Join(c.Output, rundir.ResolvedName))
	if errors.Is(err, fs.ErrNotExist) {
		if _, perr := os.Stat(filepath.Join(c.Output, rundir.PlanName)); errors.Is(perr, fs.ErrNotExist) {
			return nil // records alone: reused by key, or not
		}
	}
	if err != nil {
		var ok bool
		name, ok = planName(c.Output)
		if ok && name == c.Name {
			return nil // its plan names this config: resumed, config.yaml rewritten
		}
		if !ok {
			return c.ErrAt(fmt.Sprintf("output %s holds a run xp cannot identify (%v; its plan is unreadable too): its records in %s are intact — to keep them with this config, remove %s and %s (the records are reused by key), or move the folder aside",
				c.Output, err, filepath.Join(c.Output, "cells"), rundir.ResolvedName, rundir.PlanName), "output")
		}
	}
	mine, _ := c.Source()
	if abs, err := filepath.Abs(mine); err == nil {
		mine = abs
	}
	// A portable run's folder names its source relative to the working
	// folder (experiments.Options.Portable).
	if xio.SamePath(file, mine) && name == c.Name {
		return nil
	}
	return c.ErrAt(fmt.Sprintf("output %s holds a run of another config (%s, name %q); this is %s (name %q): give it its own output (--set output=...), or remove the folder to replace that run",
		c.Output, file, name, mine, c.Name), "output")
}

// planName is the config name of the run in dir as its plan records it
// (the plan does not record the source file).
func planName(dir string) (string, bool) {
	b, err := xio.ReadFileMax(filepath.Join(dir, rundir.PlanName), xio.MaxRecord)
	if err != nil {
		return "", false
	}
	var p rundir.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return "", false
	}
	return p.Config.Name, true
}
