package claims

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/spec"
)

// Agreement is a claim decided on records.
type Agreement struct {
	Claim Claim
	// Cite is the paper's citation.
	Cite string
	// Values are xp's values, per group and point.
	Values [][]Estimate
	// Derived is the value a derived rule computed (matched-gain's gain).
	Derived *Estimate
	Verdict string
	// Reason says why a claim does not hold, is unsettled or was not run;
	// Detail what the rule found (a range, the largest gain, a worst
	// case's bound).
	Reason, Detail string
	Magnitude      Magnitude
	// Settle is, for an unsettled claim read over seeds, what more seeds
	// would settle it (nil otherwise).
	Settle *Settle
	// Runs are the runs the claim read, Reduced how each is smaller than
	// its config ("" full size), and Dirs the folders their records were
	// read from.
	Runs, Reduced, Dirs []string
}

// Decide decides every claim of the file on the records of its runs
// (each read from its folder under Records, once). A run folder that
// does not exist leaves its claims "not run here"; one whose plan was
// made from another config or other overrides than the file says is an
// error naming the first difference: its records do not decide what the
// file claims they decide.
func (f *File) Decide() ([]Agreement, error) {
	read := map[string]tables{}
	errs := map[string]error{}
	get := func(name string) (tables, string, error) {
		if t, ok := read[name]; ok {
			return t, f.Dir(name), errs[name]
		}
		r, _ := f.Run(name)
		t, err := f.readRun(r)
		read[name], errs[name] = t, err
		return t, f.Dir(name), err
	}
	var out []Agreement
	for i := range f.Claims {
		a, err := f.decide(&f.Claims[i], get)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// DecideOn decides the claims that read only runs the given folders
// hold: a folder holds a run of the file when its plan is that run's
// config with its overrides (CheckPlan). Claims reading any other run
// are left out. It is how a page of a user's own run of a paper config
// shows the papers' verdicts on it.
func (f *File) DecideOn(dirs ...string) ([]Agreement, error) {
	held := map[string]tables{}
	where := map[string]string{}
	for _, d := range dirs {
		st, rows, stats, err := rundir.ReadTables(d)
		if err != nil {
			return nil, err
		}
		for _, r := range f.Runs {
			if _, ok := held[r.Name]; !ok && f.CheckPlan(r, st.Plan.Config) == nil {
				held[r.Name], where[r.Name] = tables{rows: rows, stats: stats}, d
			}
		}
	}
	get := func(name string) (tables, string, error) {
		t, ok := held[name]
		if !ok {
			return t, "", errNotRun
		}
		return t, where[name], nil
	}
	var out []Agreement
	for i := range f.Claims {
		c := &f.Claims[i]
		all := true
		for _, run := range c.runsRead() {
			_, ok := held[run]
			all = all && ok
		}
		if !all {
			continue
		}
		a, err := f.decide(c, get)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// FileName is the claims file's name: the published values of the paper
// configs beside it (configs/published.yaml).
const FileName = "published.yaml"

// For finds the claims file for a config file: FileName in the config's
// folder or its parent ("" when there is none).
func For(config string) string {
	if config == "" {
		return ""
	}
	for _, dir := range []string{filepath.Dir(config), filepath.Dir(filepath.Dir(config))} {
		p := filepath.Join(dir, FileName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Checkpoint is the pretrained checkpoint the named run's config
// fine-tunes (its model's checkpoint parameter, as the config and the
// run's overrides give it), "" for a run that fine-tunes none or whose
// config does not load.
func (f *File) Checkpoint(name string) string {
	r, ok := f.Run(name)
	if !ok {
		return ""
	}
	c, err := experiments.Load(f.ConfigPath(r), experiments.Options{Set: r.Set})
	if err != nil {
		return ""
	}
	if d, err := spec.Lookup(spec.Model, c.Model.Kind); err != nil || !d.Pieces {
		return ""
	}
	ck, _ := c.Model.Params["checkpoint"].(string)
	return ck
}

// errNotRun marks a run with no records here.
var errNotRun = errors.New("no records")

func (f *File) decide(c *Claim, get func(string) (tables, string, error)) (Agreement, error) {
	a := Agreement{Claim: *c, Cite: f.Cite(c.Paper)}
	unit := c.Unit
	if unit == 0 {
		unit = 1
	}
	var gs []group
	for _, pts := range c.groups() {
		g := group{points: pts}
		for _, p := range pts {
			name := cmpOr(p.Run, c.Run)
			t, dir, err := get(name)
			if !slices.Contains(a.Runs, name) {
				r, _ := f.Run(name)
				a.Runs, a.Reduced, a.Dirs = append(a.Runs, name), append(a.Reduced, r.Reduced), append(a.Dirs, dir)
			}
			switch {
			case errors.Is(err, errNotRun):
				a.Verdict, a.Reason = NotRun, fmt.Sprintf("no records of run %s in %s", name, f.Dir(name))
				if ck := f.Checkpoint(name); ck != "" {
					a.Verdict, a.Reason = NeedsCheckpoint, fmt.Sprintf("run %s fine-tunes the checkpoint %s, and no records of it are in %s: put the Hugging Face folder (config.json, vocab.txt, model.safetensors) at DATA/%s, and make paper runs it (docs/models.md)", name, ck, f.Dir(name), ck)
				}
				return a, nil
			case err != nil:
				return a, lineErr(f.Path, c.line, err)
			}
			e := t.lookup(p, c.stat(p)).scale(unit)
			if !e.Found && !c.rule().derived {
				a.Verdict, a.Reason = NotRun, fmt.Sprintf("run %s has no %s at %s", name, c.stat(p), p)
				if e.Note != "" {
					a.Reason += ": " + e.Note
				}
				return a, nil
			}
			g.values = append(g.values, e)
		}
		gs = append(gs, g)
		a.Values = append(a.Values, g.values)
	}
	rd := runReader{c: c, get: get}
	d := c.rule().decide(c, gs, rd)
	a.Verdict, a.Reason, a.Detail, a.Derived = d.verdict, d.reason, d.detail, d.value
	if w := worstNote(gs); w != "" && a.Verdict == Holds {
		a.Detail = strings.TrimPrefix(a.Detail+"; "+w, "; ")
	}
	a.Magnitude = magnitude(c, a.Values, a.Derived)
	if a.Verdict == Unsettled {
		if a.Settle = toSettle(c, gs); a.Settle != nil {
			for _, name := range a.Runs {
				t, _, _ := get(name)
				a.Settle.Runs, a.Settle.SeedSeconds = append(a.Settle.Runs, name), append(a.Settle.SeedSeconds, t.seedSeconds)
			}
		}
	}
	return a, nil
}

// seedSeconds is the mean over seeds of the wall time a seed's cells
// took (0 where the records say none).
func seedSeconds(recs []results.Record) float64 {
	bySeed := map[uint64]float64{}
	for _, r := range recs {
		bySeed[r.Cell.Seed] += r.Provenance.WallSeconds
	}
	if len(bySeed) == 0 {
		return 0
	}
	var sum float64
	for _, v := range bySeed {
		sum += v
	}
	return sum / float64(len(bySeed))
}

// worstNote says, for a worst case over sampled words that met its
// bound, how much of what they were drawn from could still miss it: by
// the one-sided 95% Clopper–Pearson bound with no miss among n words,
// 1 − 0.05^(1/n).
func worstNote(gs []group) string {
	for _, g := range gs {
		for _, v := range g.values {
			if v.Basis == BasisWorst && v.Words > 0 {
				share := 1 - math.Pow(0.05, 1/float64(v.Words))
				return fmt.Sprintf("every one of the %d sampled words meets it; at most %.2g%% of the words they were sampled from may not (95%%, Clopper–Pearson)", v.Words, 100*share)
			}
		}
	}
	return ""
}

func lineErr(path string, line int, err error) error {
	return fmt.Errorf("%s:%d: %w", path, line, err)
}

// runReader reads curves for derived rules (their values unscaled: a
// derived rule's value is its own).
type runReader struct {
	c   *Claim
	get func(string) (tables, string, error)
}

func (r runReader) curve(p Point, stat string) (eps []float64, values []Estimate) {
	t, _, err := r.get(cmpOr(p.Run, r.c.Run))
	if err != nil {
		return nil, nil
	}
	var grid []float64
	for _, s := range t.stats {
		if s.Analysis == p.Analysis && s.Setting == p.Setting && s.Seeds > 0 && p.Analysis != "" {
			grid = append(grid, s.Epsilon)
		}
	}
	for _, s := range t.rows {
		if s.Setting == p.Setting && s.Mode == p.Mode && s.Seeds > 0 && p.Mode != "" {
			grid = append(grid, s.Epsilon)
		}
	}
	sort.Float64s(grid)
	grid = slices.Compact(grid)
	for _, e := range grid {
		v := t.at(p, stat, e)
		if v.Found {
			eps, values = append(eps, e), append(values, v)
		}
	}
	return eps, values
}

// readRun reads a run's records after checking that its plan was made
// from the config and overrides the file names, that its records are its
// plan's and nothing else (rundir.State.Bound) and that each was written
// by the code the file declares (checkCode); errNotRun when its folder
// holds no run.
func (f *File) readRun(r Run) (tables, error) {
	dir := f.Dir(r.Name)
	if _, err := os.Stat(filepath.Join(dir, rundir.PlanName)); errors.Is(err, fs.ErrNotExist) {
		return tables{}, errNotRun
	}
	st, err := rundir.ReadState(dir)
	if err != nil {
		return tables{}, err
	}
	if err := f.CheckPlan(r, st.Plan.Config); err != nil {
		return tables{}, err
	}
	if err := st.Bound(); err != nil {
		return tables{}, fmt.Errorf("run %s: the records are not its plan's: %w", r.Name, err)
	}
	recs, err := st.Records()
	if err != nil {
		return tables{}, err
	}
	if err := f.checkCode(r.Name, dir, recs); err != nil {
		return tables{}, err
	}
	rows, stats := st.Tables(recs)
	return tables{rows: rows, stats: stats, seedSeconds: seedSeconds(recs)}, nil
}

// CheckPlan reports whether a run's plan (its resolved config) is the
// run's config with its overrides: everything that decides the numbers
// must agree (where the run was written, its data root, threads,
// workers, cache and checks need not).
func (f *File) CheckPlan(r Run, plan experiments.Config) error {
	want, err := experiments.Load(f.ConfigPath(r), experiments.Options{Set: r.Set})
	if err != nil {
		return fmt.Errorf("run %s: %w", r.Name, err)
	}
	a, b := numbersOf(*want), numbersOf(plan)
	if reflect.DeepEqual(a, b) {
		return nil
	}
	where, x, y := firstDifference("", a, b)
	set := ""
	if len(r.Set) > 0 {
		set = " with --set " + strings.Join(r.Set, " --set ")
	}
	return fmt.Errorf("run %s: the records in %s were made from another config than %s%s: %s is %s there, %s in the config (run it again: make paper; or correct the run's config and set in %s)",
		r.Name, f.Dir(r.Name), r.Config, set, where, y, x, f.Path)
}

// wholeNumbers is params with each whole float64 (as a plan read back
// from JSON holds its integers) an int, as a config read from YAML holds
// them, so that the descriptors accept both.
func wholeNumbers(params map[string]any) map[string]any {
	var conv func(any) any
	conv = func(x any) any {
		switch v := x.(type) {
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
				return int(v)
			}
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = conv(e)
			}
			return out
		}
		return x
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		out[k] = conv(v)
	}
	return out
}

// numbersOf is a resolved config as JSON data, without the keys that do
// not change a number, and with the model's and the analysis's defaults
// filled in from their descriptors: a parameter spelled out at its
// default is the same experiment as one left out.
func numbersOf(c experiments.Config) map[string]any {
	c.Data, c.Threads, c.Workers, c.Output, c.Cache, c.Origin = "", 0, 0, "", "", nil
	if _, v, err := spec.Resolve(spec.Model, c.Model.Kind, 0, wholeNumbers(c.Model.Params)); c.Model.Kind != "" && err == nil {
		c.Model.Params = v
	}
	if _, v, err := spec.Resolve(spec.Analysis, c.Analysis.Kind, 0, wholeNumbers(c.Analysis.Params)); c.Analysis.Kind != "" && err == nil {
		c.Analysis.Params = v
	}
	c.Checks = experiments.ChecksConfig{}
	b, _ := json.Marshal(c)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	dropEmpty(m)
	return m
}

// dropEmpty removes from a JSON object, at every depth, the keys whose
// value is null or an empty list or object: a plan read back from JSON
// holds an empty list where a freshly loaded config holds none, and the
// two say the same.
func dropEmpty(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case []any:
			if len(x) == 0 {
				delete(m, k)
			}
			for _, e := range x {
				if o, ok := e.(map[string]any); ok {
					dropEmpty(o)
				}
			}
		case map[string]any:
			dropEmpty(x)
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
}

// firstDifference finds the first key (in sorted order; a list's items
// by index when the lists are as long) where a and b differ, and both
// values there.
func firstDifference(path string, a, b any) (string, string, string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if !reflect.DeepEqual(am[k], bm[k]) {
				return firstDifference(strings.TrimPrefix(path+"."+k, "."), am[k], bm[k])
			}
		}
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			if !reflect.DeepEqual(as[i], bs[i]) {
				return firstDifference(fmt.Sprintf("%s.%d", path, i), as[i], bs[i])
			}
		}
	}
	show := func(v any) string {
		if v == nil {
			return "absent"
		}
		j, _ := json.Marshal(v)
		return string(j)
	}
	return path, show(a), show(b)
}
