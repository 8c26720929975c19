package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/runner"
)

// TestMain lets the test binary act as xp itself (XP_TEST_MAIN=1), so that
// tests can run, kill and resume real xp processes, and so that `xp run
// --workers` can spawn it.
func TestMain(m *testing.M) {
	if os.Getenv("XP_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func xpCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "XP_TEST_MAIN=1")
	return cmd
}

// records reads every record file of a run: name → bytes.
func records(t *testing.T, out string) map[string][]byte {
	t.Helper()
	m, err := readRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// readRecords reads every file in out/cells. Processes may be writing
// there: a file that vanishes between the listing and its read (a writer
// renamed its temporary file into place, or a run removed a dead writer's)
// is skipped, not an error.
func readRecords(out string) (map[string][]byte, error) {
	ents, _ := os.ReadDir(filepath.Join(out, "cells"))
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(out, "cells", e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		m[e.Name()] = b
	}
	return m, nil
}

// TestReadRecordsWhileWriting: reading the cells folder while a writer
// renames temporary files into place never fails (TestShardsShareAFolder
// failed in CI on a temporary file renamed between ReadDir and ReadFile).
func TestReadRecordsWhileWriting(t *testing.T) {
	out := t.TempDir()
	cells := filepath.Join(out, "cells")
	if err := os.Mkdir(cells, 0o755); err != nil {
		t.Fatal(err)
	}
	done, stop := make(chan error, 1), make(chan struct{})
	defer close(stop) // a failed read stops the writer before TempDir's cleanup
	go func() {
		for i := 0; i < 3000; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			tmp := filepath.Join(cells, fmt.Sprintf(".%d.json.tmp", i))
			if err := os.WriteFile(tmp, []byte("{}"), 0o644); err != nil {
				done <- err
				return
			}
			if err := os.Rename(tmp, filepath.Join(cells, fmt.Sprintf("%d.json", i))); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			m, err := readRecords(out)
			if err != nil || len(m) != 3000 {
				t.Fatalf("%d records, %v", len(m), err)
			}
			return
		default:
			if _, err := readRecords(out); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRunSurvivesKill9 kills a real `xp run` with SIGKILL once its first
// cells are recorded, runs it again, and checks that the finished cells
// are reused untouched, the rest (the interrupted one included) are run,
// and every record is whole.
func TestRunSurvivesKill9(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 150, Test: 30, Epochs: 6, Epsilon: []float64{1, 5, 20}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := xpCommand("run", "-q", cfg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for len(records(t, out)) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no cleanup runs
	cmd.Wait()
	before := records(t, out)
	if len(before) < 2 || len(before) >= 7 {
		t.Fatalf("%d of 7 records when killed: the kill did not land mid-sweep", len(before))
	}
	var stdout, stderr bytes.Buffer
	again := xpCommand("run", "-q", cfg)
	again.Stdout, again.Stderr = &stdout, &stderr
	if err := again.Run(); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, stderr.String())
	}
	after := records(t, out)
	if len(after) != 7 {
		t.Errorf("%d records after resuming, want 7: %v", len(after), keys(after))
	}
	for name, b := range before {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		if !bytes.Equal(after[name], b) {
			t.Errorf("record %s changed on resume", name)
		}
	}
	for name, b := range after {
		var r results.Record
		if !strings.HasSuffix(name, ".json") || json.Unmarshal(b, &r) != nil || r.Status != "ok" {
			t.Errorf("%s is not a whole successful record", name)
		}
	}
	reused := 0
	for name := range before {
		if strings.HasSuffix(name, ".json") {
			reused++
		}
	}
	if want := "reused from"; !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "7 cells: "+strconv.Itoa(reused)+" reused") {
		t.Errorf("resumed run's summary (want %d reused):\n%s", reused, stdout.String())
	}
}

// TestRunWorkersMatchOneProcess: `--workers 2` (two real worker processes)
// records the same numbers as one process.
func TestRunWorkersMatchOneProcess(t *testing.T) {
	acc := func(workers string) map[string]float64 {
		dir := t.TempDir()
		cfg, err := fixture.Write(dir, fixture.Options{Train: 40, Test: 20, Epochs: 2, Epsilon: []float64{2, 20}, Seeds: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := xpCommand("run", "-q", "--workers", workers, cfg)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("workers %s: %v\n%s", workers, err, stderr.String())
		}
		// One line per finished cell, whichever process ran it (workers'
		// lines were swallowed before).
		if n := strings.Count(stderr.String(), ": accuracy "); n != 5 { // not the epochs' "valid accuracy"
			t.Errorf("workers %s: %d cell lines, want 5:\n%s", workers, n, stderr.String())
		}
		m := map[string]float64{}
		for name, b := range records(t, filepath.Join(dir, "out")) {
			var r results.Record
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			m[name] = r.Test.Accuracy + 10*r.Valid.Accuracy
		}
		return m
	}
	one, two := acc("1"), acc("2")
	if len(one) != 5 || len(two) != 5 {
		t.Fatalf("records: %d with one process, %d with two workers", len(one), len(two))
	}
	for k, v := range one {
		if two[k] != v {
			t.Errorf("cell %s: %v in one process, %v with two workers", k, v, two[k])
		}
	}
}

// TestWorkersDieWithParent kills `xp run --workers 2` with SIGKILL while
// its workers run: they must stop too (before, they ran on, orphaned).
func TestWorkersDieWithParent(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 150, Test: 30, Epochs: 1000, Epsilon: []float64{1, 5, 20}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := xpCommand("run", "-q", "--workers", "2", cfg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var workers []int
	deadline := time.Now().Add(time.Minute)
	for len(workers) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		workers = children(cmd.Process.Pid)
	}
	if len(workers) < 2 {
		cmd.Process.Kill()
		t.Fatalf("workers of %d: %v", cmd.Process.Pid, workers)
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for {
		var alive []int
		for _, w := range workers {
			if running(w) {
				alive = append(alive, w)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, w := range alive {
				syscall.Kill(w, syscall.SIGKILL)
			}
			t.Fatalf("workers %v still running 10 s after their parent was killed", alive)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// children lists the processes whose parent is pid (from /proc).
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces; split after ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestRunConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set, want string
	}{
		{"mechanisms.0.epsilon=[0]", "xp.yaml: --set mechanisms.0.epsilon=[0]: laplace: ε = 0, want a finite value > 0"},
		{"model.kind=gpt", `xp.yaml: --set model.kind=gpt: unknown model "gpt" (known: baseline, bilstm, transformer)`},
		{"train.epochs=many", "xp.yaml: --set train.epochs=many: train.epochs: many is not an integer"},
	} {
		err := run(context.Background(), []string{"run", "--set", c.set, cfg}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: %v (want %q)", c.set, err, c.want)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"run", "--dry-run", cfg}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "3 cells in 2 groups: 0 cached, 3 to run") {
		t.Errorf("dry run:\n%s", out.String())
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

// TestShardsShareAFolder runs three `xp run --shard i/3` processes at once
// on one output folder and one cache, kills one with SIGKILL mid-sweep,
// runs the config again without --shard, and requires every record to be
// whole and the table to equal a single process's run of the same config
// at the same thread count.
func TestShardsShareAFolder(t *testing.T) {
	opt := fixture.Options{Train: 40, Test: 20, Epochs: 2, Epsilon: []float64{1, 5, 20}, Seeds: []int{1, 2}}
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var shards []*exec.Cmd
	var logs []*bytes.Buffer
	for i := 0; i < 3; i++ {
		cmd := xpCommand("run", "-q", "--shard", fmt.Sprintf("%d/3", i), cfg)
		var b bytes.Buffer
		cmd.Stderr = &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		shards, logs = append(shards, cmd), append(logs, &b)
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // none outlives a failed test
	}
	deadline := time.Now().Add(3 * time.Minute)
	for len(records(t, out)) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	shards[1].Process.Kill() // SIGKILL: whatever it was writing stays half done
	shards[1].Wait()
	for _, i := range []int{0, 2} {
		if err := shards[i].Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, logs[i])
		}
	}
	var stdout, stderr bytes.Buffer
	again := xpCommand("run", "-q", cfg)
	again.Stdout, again.Stderr = &stdout, &stderr
	if err := again.Run(); err != nil {
		t.Fatalf("merging run: %v\n%s", err, stderr.String())
	}
	recs := records(t, out)
	if len(recs) != 14 {
		t.Errorf("%d records, want 14", len(recs))
	}
	for name, b := range recs {
		var r results.Record
		if !strings.HasSuffix(name, ".json") || json.Unmarshal(b, &r) != nil || r.Status != "ok" {
			t.Errorf("%s is not a whole successful record", name)
		}
	}
	// One process, another folder: the same table.
	single := t.TempDir()
	cfg2, err := fixture.Write(single, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := xpCommand("run", "-q", cfg2).Run(); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(out, "tables", "results.csv"))
	b, _ := os.ReadFile(filepath.Join(single, "out", "tables", "results.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("sharded table:\n%s\nsingle process:\n%s", a, b)
	}
}

// TestResultsOfAnalysisRun: xp results and xp plot rebuild an analysis
// run's tables and figures, stages included (before, they printed an empty
// utility table and failed with "nothing to plot").
func TestResultsOfAnalysisRun(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 5, Epochs: 1, Epsilon: []float64{1, 20}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(cfg)
	text = []byte(strings.Replace(string(text), "apply: [none, train, test]\n", "analysis:\n  kind: bayes-adversary\n  samples: 20\nstages:\n  - kind: utility-loss\n", 1))
	if err := os.WriteFile(cfg, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"run", cfg}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(cfg), "out")
	var res bytes.Buffer
	if err := run(context.Background(), []string{"results", out}, &res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bayes-adversary:", "utility-loss:", "| laplace | metric-dp | 20 | 1 |", "| laplace | metric-dp | both | 20 | 1 |"} {
		if !strings.Contains(res.String(), want) {
			t.Errorf("xp results lacks %q:\n%s", want, res.String())
		}
	}
	var plots bytes.Buffer
	if err := run(context.Background(), []string{"plot", out}, &plots); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bayes-adversary.png", "utility-loss.png", "accuracy.png"} {
		if !strings.Contains(plots.String(), want) {
			t.Errorf("xp plot lacks %s:\n%s", want, plots.String())
		}
	}
}

// TestResultsCompare: xp results --compare tests a run's lines against
// each other, paired on seeds and examples, and names the table's lines
// when one is mistyped.
func TestResultsCompare(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 8, Epochs: 1, Epsilon: []float64{1, 20}, Seeds: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"run", "-q", cfg}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var res bytes.Buffer
	if err := run(context.Background(), []string{"results", "--compare", out, "laplace test 1", "laplace  test 20", "baseline"}, &res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| A | B | seeds | examples |", "| laplace test 1 | laplace test 20 | 2 | ", "| laplace test 20 | none | 2 | ", "adjusted over the 3 comparisons"} {
		if !strings.Contains(res.String(), want) {
			t.Errorf("xp results --compare lacks %q:\n%s", want, res.String())
		}
	}
	// Every table xp results prints has its LaTeX: the paired tests, the
	// run's tables, two runs side by side.
	for _, args := range [][]string{{"--latex", "--compare", out, "laplace test 1", "none"}, {"--latex", out}, {"--latex", out, out}} {
		var tex bytes.Buffer
		if err := run(context.Background(), append([]string{"results"}, args...), &tex); err != nil || !strings.Contains(tex.String(), "\\begin{tabular}") || !strings.Contains(tex.String(), "\\bottomrule") || strings.Contains(tex.String(), "|---") {
			t.Errorf("xp results %v: %v\n%s", args, err, tex.String())
		}
	}
	err = run(context.Background(), []string{"results", "--compare", out, "laplace tset 1", "none"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `did you mean "laplace test 1"?`) || !strings.Contains(err.Error(), "laplace train 20") {
		t.Errorf("a mistyped line: %v", err)
	}
	if err := run(context.Background(), []string{"results", "--compare", out, "none"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "usage: xp results --compare") {
		t.Errorf("one line: %v", err)
	}
}

// TestPartialRun: after one shard of two, xp status counts what is done
// and missing, xp results prints the table of what is there and says it
// is partial, and a merge writes the tables and fails naming the cells
// without a record (it said "see their records" before, where none was).
func TestPartialRun(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 40, Test: 20, Epochs: 1, Epsilon: []float64{1, 20}, Seeds: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if b, err := xpCommand("run", "-q", "--shard", "0/2", cfg).CombinedOutput(); err != nil {
		t.Fatalf("shard 0/2: %v\n%s", err, b)
	}
	n := len(records(t, out))
	if n == 0 || n >= 10 {
		t.Fatalf("%d of 10 records after shard 0/2", n)
	}
	var status bytes.Buffer
	if err := run(context.Background(), []string{"status", out}, &status); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("10 cells in 6 groups: %d done, 0 failed, %d missing", n, 10-n); !strings.Contains(status.String(), want) {
		t.Errorf("xp status:\n%s\nwant %q", status.String(), want)
	}
	var res bytes.Buffer
	if err := run(context.Background(), []string{"results", out}, &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.String(), "| none |") {
		t.Errorf("xp results of a partial run:\n%s", res.String())
	}
	// A damaged record and a foreign one are reported by xp status, not
	// passed over as "no record yet" or in silence.
	var damaged string
	var whole []byte
	for name, b := range records(t, out) {
		damaged, whole = name, b
		break
	}
	os.WriteFile(filepath.Join(out, "cells", damaged), []byte(`{"key": "`), 0o644)
	os.WriteFile(filepath.Join(out, "cells", "0000foreign.json"), []byte(`{"key": "0000foreign", "status": "ok"}`), 0o644)
	status.Reset()
	if err := run(context.Background(), []string{"status", out}, &status); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"warning: " + filepath.Join(out, "cells", damaged) + ": damaged record", "0000foreign.json: a record of no cell of this run's plan", "damaged record (unexpected end of JSON input); its cell runs again"} {
		if !strings.Contains(status.String(), want) {
			t.Errorf("xp status with a damaged and a foreign record lacks %q:\n%s", want, status.String())
		}
	}
	os.Remove(filepath.Join(out, "cells", "0000foreign.json"))
	os.WriteFile(filepath.Join(out, "cells", damaged), whole, 0o644)
	err = run(context.Background(), []string{"run", "-q", "--merge", cfg}, &bytes.Buffer{})
	var f failedCells
	if !errors.As(err, &f) || f.n != 10-n || f.missing != 10-n || strings.Contains(err.Error(), "see their records") || !strings.Contains(err.Error(), "no record yet") {
		t.Errorf("merge of a partial run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "tables", "results.csv")); err != nil {
		t.Errorf("merge wrote no table: %v", err)
	}
	if n2 := len(records(t, out)); n2 != n {
		t.Errorf("merge ran cells: %d records, had %d", n2, n)
	}
}

// TestCellResumesMidTraining kills `xp run` with SIGKILL during a cell's
// training, after its epoch checkpoints began, runs it again, and requires
// the cell's record to equal an uninterrupted run's (scores and per-epoch
// losses) and its checkpoint to be gone.
func TestCellResumesMidTraining(t *testing.T) {
	opt := fixture.Options{Train: 150, Test: 30, Epochs: 12, Epsilon: []float64{5}, Seeds: []int{1}}
	score := func(dir string) (results.Record, string) {
		t.Helper()
		recs := records(t, filepath.Join(dir, "out"))
		if len(recs) != 1 {
			t.Fatalf("%d records in %s", len(recs), dir)
		}
		for _, b := range recs {
			var r results.Record
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			var losses []string
			for _, e := range r.Epochs {
				losses = append(losses, fmt.Sprint(e.Loss, e.Valid.Accuracy))
			}
			return r, strings.Join(losses, " ")
		}
		panic("unreachable")
	}
	whole := t.TempDir()
	cfg, err := fixture.Write(whole, opt)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := xpCommand("run", "-q", "--set", "apply=[train]", cfg).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	dir := t.TempDir()
	cfg2, err := fixture.Write(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	cmd := xpCommand("run", "-q", "--set", "apply=[train]", cfg2)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(dir, "cache", "checkpoints", "*", "epoch-[3-9]")); len(m) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if n := len(records(t, filepath.Join(dir, "out"))); n != 0 {
		t.Fatalf("%d records when killed: the kill did not land mid-training", n)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "cache", "checkpoints", "*", "latest")); len(m) != 1 {
		t.Fatalf("no checkpoint when killed: %v", m)
	}
	if b, err := xpCommand("run", "-q", "--set", "apply=[train]", cfg2).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	a, al := score(whole)
	b, bl := score(dir)
	if al != bl || !reflect.DeepEqual(a.Test, b.Test) || !reflect.DeepEqual(a.Valid, b.Valid) || a.BestEpoch != b.BestEpoch {
		t.Errorf("uninterrupted: test %+v, epochs %s\nresumed: test %+v, epochs %s", a.Test, al, b.Test, bl)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "cache", "checkpoints", "*")); len(m) != 0 {
		t.Errorf("checkpoints left after the cell was recorded: %v", m)
	}
}

// TestInterruptSaysWhereItStopped: Ctrl-C (SIGINT) mid-sweep ends the run
// with "interrupted: K of N cells recorded; run again to resume" (it said
// "context canceled"), K the records on disk, and exit status 130.
func TestInterruptSaysWhereItStopped(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 150, Test: 30, Epochs: 6, Epsilon: []float64{1, 5, 20}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stderr bytes.Buffer
	cmd := xpCommand("run", "-q", cfg)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for len(records(t, out)) < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	n := len(records(t, out))
	if n < 1 || n >= 7 {
		t.Fatalf("%d of 7 records when interrupted: the signal did not land mid-sweep", n)
	}
	want := fmt.Sprintf("xp: interrupted: %d of 7 cells recorded; run again to resume\n", n)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("exit %v, stderr ends %q; want status 130 and %q", err, stderr.String()[max(0, stderr.Len()-6000):], want)
	}
}

// TestConcurrentRuns: two and three `xp run` processes on one folder at
// once: the later ones are refused with a message naming the running
// process, the first records every cell, and its table equals a run of
// the same config alone. (Two runs on one folder trained the same cells,
// resumed each other's checkpoints, and a failed record replaced a
// successful one.)
func TestConcurrentRuns(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 150, Test: 30, Epochs: 25, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(dir, "alone")
	if b, err := xpCommand("run", "-q", "--set", "output="+alone, cfg).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for _, n := range []int{2, 3} {
		out := filepath.Join(dir, fmt.Sprintf("shared%d", n))
		first := xpCommand("run", "-q", "--set", "output="+out, "--set", "cache="+filepath.Join(dir, fmt.Sprintf("cache%d", n)), cfg)
		var firstOut bytes.Buffer
		first.Stdout, first.Stderr = &firstOut, &firstOut
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for { // the first holds the folder once its lock names it
			if b, _ := os.ReadFile(filepath.Join(out, runner.LockName)); bytes.Contains(b, []byte(fmt.Sprint(first.Process.Pid))) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for i := 1; i < n; i++ {
			b, err := xpCommand("run", "-q", "--set", "output="+out, "--set", "cache="+filepath.Join(dir, fmt.Sprintf("cache%d", n)), cfg).CombinedOutput()
			if err == nil || !strings.Contains(string(b), fmt.Sprintf("is being run by process %d", first.Process.Pid)) {
				t.Errorf("%d runs: run %d beside the first: %v\n%s", n, i+1, err, b)
			}
		}
		if err := first.Wait(); err != nil {
			t.Fatalf("%d runs: the first: %v\n%s", n, err, firstOut.String())
		}
		got, _ := os.ReadFile(filepath.Join(out, "tables", "results.csv"))
		want, _ := os.ReadFile(filepath.Join(alone, "tables", "results.csv"))
		if len(got) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%d runs: the table differs from a run alone:\n%s\nwant\n%s", n, got, want)
		}
	}
}

// TestResultsIntoLeavesPaperDocs: xp results --into refuses the
// reproduction document, whose blocks make paper-tables writes (two
// generators filled the same blocks differently), and leaves it as it
// was.
func TestResultsIntoLeavesPaperDocs(t *testing.T) {
	src, err := os.ReadFile("../../docs/reproduction.md")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "reproduction.md")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"results", "--into", path}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "run make paper-tables") {
		t.Errorf("xp results --into the reproduction document: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, src) {
		t.Error("the document changed")
	}
}
