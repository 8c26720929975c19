package runner

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// TestLocalReportsWorkers: a worker's lines are passed on as they come;
// one that crashes is reported with the tail of its output, one that
// cannot start says so, and one that exits 0 is no error.
func TestLocalReportsWorkers(t *testing.T) {
	sw := &Sweep{Config: "c.yaml", Groups: 2, Cells: []rundir.CellStatus{{Key: "a", Group: 0, Status: "todo"}, {Key: "b", Group: 1, Status: "todo"}}, Threads: 1}
	var err error
	if sw.store, err = results.OpenStore(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		script string
		want   []string // in the error; none: no error
		log    string   // in the log
	}{
		{"ok", "echo 'cell a: accuracy 0.5' >&2", nil, "cell a: accuracy 0.5"},
		{"crash", "echo 'loading' >&2; echo 'panic: boom' >&2; exit 2", []string{"worker 0/2", "worker 1/2", "exit status 2", "panic: boom"}, "loading"},
		{"silent", "kill -9 $$", []string{"signal: killed", "printing nothing"}, ""},
	} {
		var log bytes.Buffer
		l := Local{Workers: 2, Log: &log, Command: func(ctx context.Context, config string, shard, shards, threads int) *exec.Cmd {
			return exec.CommandContext(ctx, "sh", "-c", c.script)
		}}
		err := l.Launch(context.Background(), sw)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && err == nil:
			t.Errorf("%s: no error", c.name)
		}
		for _, w := range c.want {
			if err != nil && !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", c.name, w, err)
			}
		}
		if !strings.Contains(log.String(), c.log) || c.log != "" && strings.Count(log.String(), c.log) != 2 {
			t.Errorf("%s: log:\n%s", c.name, log.String())
		}
	}
	l := Local{Workers: 2, Command: func(ctx context.Context, config string, shard, shards, threads int) *exec.Cmd {
		return exec.CommandContext(ctx, "/nonexistent/xp")
	}}
	if err := l.Launch(context.Background(), sw); err == nil || !strings.Contains(err.Error(), "start") {
		t.Errorf("a worker that cannot start: %v", err)
	}
}

// TestSweepTodo: the shards to start are those whose groups hold a cell
// to run.
func TestSweepTodo(t *testing.T) {
	sw := &Sweep{Groups: 5, Cells: []rundir.CellStatus{{Group: 0, Status: "cached"}, {Group: 1, Status: "todo"}, {Group: 4, Status: "todo"}, {Group: 3, Status: "cached"}}}
	for n, want := range map[int][]int{3: {1}, 5: {1, 4}, 2: {0, 1}, 1: {0}} {
		if got := sw.Todo(n); !slices.Equal(got, want) {
			t.Errorf("Todo(%d) = %v, want %v", n, got, want)
		}
	}
}
