package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xp-nlp/xp/internal/realdata"
	"github.com/xp-nlp/xp/internal/slurmtest"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/slurm"
)

// TestSlurm runs a small real sweep (SST-2 and the fastText vectors of the
// data root; 10 cells in 6 groups) through `xp slurm --submit` on a real
// single-node Slurm started for the test: an array of 6 tasks, at most 2
// at once, a preparation job and a dependent merge job. The merged table
// must equal a plain `xp run` of the same config at the same thread count.
// A second round kills one running task; `xp slurm --submit` again must
// submit only the shards with cells left, leave the records already there
// untouched, and finish the sweep.
func TestSlurm(t *testing.T) {
	root := realdata.Root(t)
	// The folder first, so that it is removed after the cluster stops
	// (cleanups run last first): a task still writing into it made its
	// removal fail.
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	cl := slurmtest.Start(t)
	sets := func(out, cache string, epochs string) []string {
		var a []string
		for _, s := range []string{"data=" + root, "dataset.train_limit=300", "dataset.test_limit=200", "train.epochs=" + epochs, "model.hidden=16",
			"mechanisms.0.epsilon=[10, 50]", "seeds=[1, 2]", "output=" + out, "cache=" + cache} {
			a = append(a, "--set", s)
		}
		return a
	}
	config, err := filepath.Abs("../../configs/sst2_quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	submit := func(out, cache, epochs string) string {
		t.Helper()
		args := append([]string{"slurm", "--submit", "--cpus-per-task", "1", "--array-parallel", "2"}, sets(out, cache, epochs)...)
		cmd := xpCommand(append(args, config)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("xp slurm: %v\n%s", err, stderr.String())
		}
		if got := strings.TrimSpace(stdout.String()); got != out {
			t.Errorf("xp slurm printed %q, want the run folder %s", got, out)
		}
		t.Logf("xp slurm: %s", stderr.String())
		return out
	}
	lastSubmission := func(out string) slurm.Submission {
		t.Helper()
		j, err := slurm.ReadJobs(out)
		if err != nil || len(j.Submissions) == 0 {
			t.Fatalf("jobs.json: %v %+v", err, j)
		}
		return j.Submissions[len(j.Submissions)-1]
	}
	// wait polls the queue until the submission's merge job is gone, and
	// returns the most array tasks seen running at once.
	wait := func(out string, sub slurm.Submission, onPoll func([]slurm.Task)) int {
		t.Helper()
		most := 0
		deadline := time.Now().Add(6 * time.Minute)
		for {
			tasks, err := slurm.Queue(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			running := 0
			merge := false
			for _, task := range tasks {
				if strings.HasPrefix(task.ID, sub.Array+"_") && task.State == "RUNNING" {
					running++
				}
				merge = merge || task.ID == sub.Merge
			}
			most = max(most, running)
			if !merge {
				return most
			}
			if onPoll != nil {
				onPoll(tasks)
			}
			if time.Now().After(deadline) {
				q, _ := cl.Client("squeue", "-r")
				t.Fatalf("jobs still queued after 6 minutes:\n%s\n%s", q, cl.Logs())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	taskLogs := func(out string) string {
		var b strings.Builder
		logs, _ := filepath.Glob(filepath.Join(slurm.Dir(out), "logs", "*.out"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			b.WriteString("== " + filepath.Base(l) + "\n" + string(data))
		}
		return b.String()
	}

	// Round 1: the whole sweep on Slurm, against a plain run.
	out := submit(filepath.Join(dir, "slurm"), filepath.Join(dir, "cache-slurm"), "1")
	sub := lastSubmission(out)
	if sub.Tasks != 6 || len(sub.Shards) != 6 {
		t.Fatalf("submission %+v: want 6 tasks, one per group", sub)
	}
	if most := wait(out, sub, nil); most > 2 {
		t.Errorf("%d array tasks ran at once; the throttle is 2", most)
	}
	st, err := rundir.ReadState(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Ok != 10 || st.Failed+st.Missing != 0 {
		t.Fatalf("after the array: %d ok, %d failed, %d missing\n%s", st.Ok, st.Failed, st.Missing, taskLogs(out))
	}
	for i := 0; i < 6; i++ {
		if logs, _ := filepath.Glob(filepath.Join(slurm.Dir(out), "logs", "shard-"+strconv.Itoa(i)+"-job*.out")); len(logs) != 1 {
			t.Errorf("shard %d: logs %v", i, logs)
		}
	}
	ref := filepath.Join(dir, "plain")
	plain := xpCommand(append(append([]string{"run", "-q", "--threads", "1"}, sets(ref, filepath.Join(dir, "cache-plain"), "1")...), config)...)
	if b, err := plain.CombinedOutput(); err != nil {
		t.Fatalf("plain run: %v\n%s", err, b)
	}
	a, _ := os.ReadFile(filepath.Join(out, "tables", "results.csv"))
	b, _ := os.ReadFile(filepath.Join(ref, "tables", "results.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("merged table of the Slurm run:\n%s\nplain xp run:\n%s\nlogs:\n%s", a, b, taskLogs(out))
	}

	// Round 2: kill one running task, then submit again.
	out2 := submit(filepath.Join(dir, "slurm2"), filepath.Join(dir, "cache-slurm"), "3")
	sub2 := lastSubmission(out2)
	// A running task whose shard still has cells to run is killed; one
	// that ends between the poll and the kill (scancel: "Invalid job id")
	// is passed over for the next poll's.
	killed := ""
	wait(out2, sub2, func(tasks []slurm.Task) {
		if killed != "" || len(records(t, out2)) == 0 {
			return
		}
		st, err := rundir.ReadState(out2)
		if err != nil {
			return // being written: the next poll reads it
		}
		left := st.Unfinished(sub2.Tasks)
		for _, task := range tasks {
			index, ok := strings.CutPrefix(task.ID, sub2.Array+"_")
			shard, err := strconv.Atoi(index)
			if !ok || err != nil || task.State != "RUNNING" || !slices.Contains(left, shard) {
				continue
			}
			msg, err := cl.Client("scancel", "--signal=KILL", task.ID)
			if err != nil && strings.Contains(msg, "Invalid job id") {
				continue
			} else if err != nil {
				t.Fatalf("scancel %s: %v %s", task.ID, err, msg)
			}
			killed = task.ID
			return
		}
	})
	if killed == "" {
		t.Fatal("no running task to kill")
	}
	st2, err := rundir.ReadState(out2)
	if err != nil {
		t.Fatal(err)
	}
	want := st2.Unfinished(sub2.Tasks)
	if len(want) == 0 {
		t.Skipf("SKIP: task %s finished before it was killed", killed)
	}
	before := records(t, out2)
	submit(out2, filepath.Join(dir, "cache-slurm"), "3")
	sub3 := lastSubmission(out2)
	if !slices.Equal(sub3.Shards, want) || sub3.Tasks != sub2.Tasks {
		t.Errorf("re-submission ran shards %v of %d; the shards with cells left were %v of %d (killed %s)", sub3.Shards, sub3.Tasks, want, sub2.Tasks, killed)
	}
	wait(out2, sub3, nil)
	st3, err := rundir.ReadState(out2)
	if err != nil {
		t.Fatal(err)
	}
	if st3.Ok != 10 {
		t.Fatalf("after re-submission: %d ok, %d failed, %d missing\n%s", st3.Ok, st3.Failed, st3.Missing, taskLogs(out2))
	}
	after := records(t, out2)
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("record %s changed on re-submission", name)
		}
	}
	for name, b := range after {
		var r results.Record
		if json.Unmarshal(b, &r) != nil || r.Status != "ok" {
			t.Errorf("%s is not a whole successful record", name)
		}
	}
	if _, err := os.Stat(filepath.Join(out2, "tables", "results.csv")); err != nil {
		t.Errorf("the merge job wrote no table: %v", err)
	}
}
