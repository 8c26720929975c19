package slurm

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/runner"
)

func TestRanges(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{nil, ""}, {[]int{3}, "3"}, {[]int{0, 1, 2, 3}, "0-3"}, {[]int{0, 1, 2, 3, 7, 9, 10}, "0-3,7,9-10"}, {[]int{1, 3, 5}, "1,3,5"},
	} {
		if got := Ranges(c.in); got != c.want {
			t.Errorf("Ranges(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestScripts: the array script names N (so that a subset submitted by
// hand keeps it), threads come from SLURM_CPUS_PER_TASK, every job gets
// the resources asked for, tasks are requeued, logs go per task into the
// run folder; without --submit the submission is printed, not made.
func TestScripts(t *testing.T) {
	out := t.TempDir()
	sw := &runner.Sweep{Config: filepath.Join(out, "config.yaml"), Out: out, Groups: 7,
		Cells: []rundir.CellStatus{{Group: 0, Status: "todo"}, {Group: 3, Status: "cached"}, {Group: 5, Status: "todo"}, {Group: 6, Status: "todo"}}}
	var log bytes.Buffer
	l := Launcher{Options{Partition: "gpu", Gres: "gpu:1", CPUsPerTask: 4, Mem: "16G", Time: "2:00:00", ArrayParallel: 2,
		SbatchArgs: []string{"--qos=low"}, Exe: "/opt/xp it's/xp", Env: []string{"XP_DATA=/shared/data"}, Log: &log}}
	if err := l.Launch(context.Background(), sw); err != nil {
		t.Fatal(err)
	}
	array, err := os.ReadFile(filepath.Join(Dir(out), "array.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`--shard "${SLURM_ARRAY_TASK_ID}/7"`, `--threads "${SLURM_CPUS_PER_TASK:-1}"`, "#SBATCH --requeue", "#SBATCH --open-mode=append", "#SBATCH --partition=gpu",
		"#SBATCH --gres=gpu:1", "#SBATCH --cpus-per-task=4", "#SBATCH --mem=16G", "#SBATCH --time=2:00:00", "#SBATCH --qos=low",
		"#SBATCH --output=" + filepath.Join(Dir(out), "logs", "shard-%a-job%A.out"), "export XP_DATA=/shared/data",
		`exec '/opt/xp it'\''s/xp' run -q --shard`,
	} {
		if !strings.Contains(string(array), want) {
			t.Errorf("array.sbatch lacks %q:\n%s", want, array)
		}
	}
	for name, want := range map[string]string{"prepare.sbatch": "run -q --prepare", "merge.sbatch": "run -q --merge"} {
		b, _ := os.ReadFile(filepath.Join(Dir(out), name))
		if !strings.Contains(string(b), want) || !strings.Contains(string(b), "#SBATCH --partition=gpu") || strings.Contains(string(b), "--requeue") {
			t.Errorf("%s:\n%s", name, b)
		}
	}
	// Shards with cells to run: groups 0, 5, 6 of 7 tasks; throttled.
	if !strings.Contains(log.String(), "--array=0,5-6%2") {
		t.Errorf("printed submission:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(Dir(out), "jobs.json")); err == nil {
		t.Error("jobs.json written without --submit")
	}
}

// TestTasksFixed: a run folder keeps the N of its first submission.
func TestTasksFixed(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(Dir(out), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := writeJobs(out, Jobs{Tasks: 4, Submissions: []Submission{{Array: "12", Tasks: 4, Shards: []int{0, 1, 2, 3}}}}); err != nil {
		t.Fatal(err)
	}
	sw := &runner.Sweep{Config: filepath.Join(out, "config.yaml"), Out: out, Groups: 9, Cells: []rundir.CellStatus{{Group: 6, Status: "todo"}}}
	l := Launcher{Options{Exe: "/bin/xp", Tasks: 9}}
	if err := l.Launch(context.Background(), sw); err == nil || !strings.Contains(err.Error(), "submitted as 4 tasks") {
		t.Errorf("--tasks 9 on a folder submitted as 4: %v", err)
	}
	var log bytes.Buffer
	l = Launcher{Options{Exe: "/bin/xp", Log: &log}}
	if err := l.Launch(context.Background(), sw); err != nil {
		t.Fatal(err)
	}
	// Group 6 of N = 4 is shard 2.
	if !strings.Contains(log.String(), "--array=2 ") {
		t.Errorf("re-submission:\n%s", log.String())
	}
	if b, _ := os.ReadFile(filepath.Join(Dir(out), "array.sbatch")); !strings.Contains(string(b), `"${SLURM_ARRAY_TASK_ID}/4"`) {
		t.Errorf("array.sbatch:\n%s", b)
	}
}

// TestHostileNames: the submission xp prints is safe to paste whatever the
// run folder is called — run through sh (with sbatch a function that
// prints its arguments), each line passes the script paths as they are and
// runs nothing of the name — and an sbatch option with a line break (the
// rest of it would become a line of the script) is refused.
func TestHostileNames(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	base := t.TempDir()
	pwned := filepath.Join(base, "PWNED")
	out := filepath.Join(base, "run $(touch "+pwned+") `touch "+pwned+"` it's")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	sw := &runner.Sweep{Config: filepath.Join(out, "config.yaml"), Out: out, Groups: 2,
		Cells: []rundir.CellStatus{{Group: 0, Status: "todo"}, {Group: 1, Status: "todo"}}}
	var log bytes.Buffer
	l := Launcher{Options{Exe: "/bin/xp", Log: &log}}
	if err := l.Launch(context.Background(), sw); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.HasPrefix(l, "  ") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) != 3 {
		t.Fatalf("printed:\n%s", log.String())
	}
	// sbatch prints its arguments one a line on standard error and a job id.
	script := "sbatch() { for a in \"$@\"; do printf '%s\\n' \"$a\" >&2; done; echo 42; }\n" + strings.Join(lines, "\n") + "\n"
	if err := exec.Command("sh", "-n", "-c", script).Run(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, script)
	}
	var got bytes.Buffer
	cmd := exec.Command("sh", "-c", script)
	cmd.Stderr = &got
	if err := cmd.Run(); err != nil {
		t.Fatalf("sh: %v\n%s", err, script)
	}
	for _, name := range []string{"prepare.sbatch", "array.sbatch", "merge.sbatch"} {
		if !strings.Contains(got.String(), "\n"+filepath.Join(Dir(out), name)+"\n") {
			t.Errorf("the pasted lines did not pass %s as it is:\n%s", name, got.String())
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("pasting the printed lines ran a command from the folder's name")
	}
	for _, o := range []Options{{Partition: "gpu\nrm -rf /tmp/x"}, {SbatchArgs: []string{"--qos=low\r\nid"}}, {Env: []string{"A;id=1"}}} {
		o.Exe, o.Log = "/bin/xp", &log
		if err := (Launcher{o}).Launch(context.Background(), sw); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
}
