package suite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is one binary of the suite running as its own process.
type Proc struct {
	// Name is the binary's name (servicedesk, gateway, ferretdb…).
	Name string
	// StartUp is the time from exec to ready (grpc.health SERVING, gateway /healthz 200,
	// FerretDB's URI line).
	StartUp time.Duration
	// Idle is the memory read once the suite has started and settled, before any load.
	Idle Memory

	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	waitErr error
	log     *os.File
}

// Memory is a process's resident set as /proc/<pid>/status reports it.
type Memory struct {
	RSS  int64 // VmRSS, bytes
	Peak int64 // VmHWM (the peak resident set so far), bytes
}

// launch starts bin with env (on top of the bench's own environment), pinned to cpus when
// set; its stdout and stderr go to logDir/<name>.log unless stdout is taken. sockets are
// passed as file descriptors 3, 4, ... (settings fd:3, fd:4, ...); launch closes the bench's
// copies.
func launch(name, bin string, args, env []string, cpus, logDir string, stdout io.Writer, sockets ...*os.File) (*Proc, error) {
	defer func() {
		for _, f := range sockets {
			_ = f.Close()
		}
	}()
	logFile, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("log of %s: %w", name, err)
	}
	argv := append([]string{bin}, args...)
	if cpus != "" {
		argv = append([]string{"taskset", "-c", cpus}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.ExtraFiles = sockets
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if stdout != nil {
		cmd.Stdout = stdout
	}
	// The children die with the bench even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	p := &Proc{Name: name, cmd: cmd, done: make(chan struct{}), log: logFile, started: time.Now()}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id (taskset execs the binary, so it is the binary's).
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *Proc) exited() (bool, error) {
	select {
	case <-p.done:
		if p.waitErr == nil {
			return true, errors.New("exited")
		}
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Memory reads VmRSS and VmHWM from /proc/<pid>/status.
func (p *Proc) Memory() (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		return Memory{}, fmt.Errorf("memory of %s: %w", p.Name, err)
	}
	defer f.Close()
	var m Memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		switch key {
		case "VmRSS":
			m.RSS = kib(value)
		case "VmHWM":
			m.Peak = kib(value)
		}
	}
	return m, sc.Err()
}

// kib parses "   12345 kB" into bytes.
func kib(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return n << 10
}

// stop sends SIGTERM and waits up to timeout, then kills.
func (p *Proc) stop(timeout time.Duration) error {
	defer p.log.Close()
	if done, _ := p.exited(); done {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %s; killed", p.Name, timeout)
	}
}

// waitUntil polls ready every 5 ms until it succeeds, the process exits, or the deadline.
func (p *Proc) waitUntil(ctx context.Context, limit time.Duration, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready(ctx) {
			p.StartUp = time.Since(p.started)
			return nil
		}
		if done, err := p.exited(); done {
			return fmt.Errorf("%s stopped during start-up (%v); see %s", p.Name, err, p.log.Name())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s; see %s", p.Name, limit, p.log.Name())
		case <-tick.C:
		}
	}
}

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// CPU is the process's CPU time so far (user + system, all threads).
func (p *Proc) CPU() (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
	if err != nil {
		return 0, fmt.Errorf("cpu of %s: %w", p.Name, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	_, rest, ok := strings.Cut(string(raw), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		return 0, fmt.Errorf("cpu of %s: unexpected /proc stat", p.Name)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu of %s: unexpected /proc stat", p.Name)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
