// Package slurmtest starts a real single-node Slurm cluster (Debian's
// slurmctld, slurmd and munge) in a temporary folder for tests: nothing
// under /etc is read or written, every client finds it through SLURM_CONF,
// and everything it started is stopped when the test ends, failed or not.
package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cluster is a running single-node cluster.
type Cluster struct {
	Dir  string // its folder: slurm.conf, logs, state
	Conf string // SLURM_CONF
	Node string
	CPUs string

	procs []*exec.Cmd
}

// Start starts a cluster for t and sets SLURM_CONF for the test (and the
// processes it starts). It skips t, saying why, where Slurm cannot start
// here (packages missing, not root); scripts/setup.sh installs them.
func Start(t *testing.T) *Cluster {
	t.Helper()
	for _, bin := range []string{"slurmctld", "slurmd", "munged", "mungekey", "sbatch", "squeue", "sinfo", "scancel"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("SKIP: no Slurm here (%s not found; scripts/setup.sh installs Debian's slurmctld slurmd slurm-client munge)", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the test cluster runs its daemons as root (SlurmUser=root); not root here")
	}
	// munged refuses a socket folder that others can write or list.
	dir, err := os.MkdirTemp("", "xp-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf")}
	t.Cleanup(c.stop)
	for _, sub := range []string{"state", "spool", "log"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	if out, err := exec.Command("mungekey", "--create", "--keyfile="+p("munge.key")).CombinedOutput(); err != nil {
		t.Fatalf("mungekey: %v: %s", err, out)
	}
	c.start(t, "munged", "-F", "--key-file="+p("munge.key"), "--socket="+p("munge.sock"), "--pid-file="+p("munged.pid"),
		"--log-file="+p("log/munged.log"), "--seed-file="+p("munge.seed"))
	node, err := exec.Command("slurmd", "-C").Output()
	if err != nil {
		t.Skipf("SKIP: slurmd -C: %v", err)
	}
	nodeLine := strings.SplitN(strings.TrimSpace(string(node)), "\n", 2)[0]
	for _, f := range strings.Fields(nodeLine) {
		if k, v, _ := strings.Cut(f, "="); k == "NodeName" {
			c.Node = v
		} else if k == "CPUs" {
			c.CPUs = v
		}
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	ctlPort, dPort := freePort(t), freePort(t)
	conf := fmt.Sprintf(`ClusterName=xptest
SlurmctldHost=%s(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
SchedulerParameters=sched_interval=1
ReturnToService=2
%s NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, ctlPort, dPort, p("munge.sock"), p("state"), p("spool"), p("slurmctld.pid"), p("slurmd.pid"),
		p("log/slurmctld.log"), p("log/slurmd.log"), nodeLine)
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", c.Conf)
	c.start(t, "slurmctld", "-D")
	c.start(t, "slurmd", "-D")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := c.Client("sinfo", "-h", "-N", "-o", "%T")
		if strings.TrimSpace(out) == "idle" {
			break
		}
		if time.Now().After(deadline) {
			t.Skipf("SKIP: Slurm did not start here in 30 s (sinfo: %q); logs:\n%s", out, c.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("Slurm started in %s: node %s, %s CPUs", dir, c.Node, c.CPUs)
	return c
}

// start starts a daemon in the foreground, in its own process group.
func (c *Cluster) start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	log, err := os.Create(filepath.Join(c.Dir, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Skipf("SKIP: %s does not start here: %v", name, err)
	}
	log.Close()
	c.procs = append(c.procs, cmd)
}

// Client runs a Slurm client command against the cluster, bounded in time
// (clients block for seconds when slurmctld is down).
func (c *Cluster) Client(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Logs are the daemons' logs, for failure messages.
func (c *Cluster) Logs() string {
	var b strings.Builder
	for _, name := range []string{"slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out", "munged.out"} {
		data, _ := os.ReadFile(filepath.Join(c.Dir, "log", name))
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", name, data)
	}
	return b.String()
}

// stop cancels every job, then stops the daemons (slurmd first) and
// waits for them.
func (c *Cluster) stop() {
	if len(c.procs) >= 3 {
		c.Client("scancel", "--full", "--user=root")
		time.Sleep(500 * time.Millisecond)
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	c.procs = nil
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
