// Package suite builds the suite's binaries and runs each as its own process, as a deployment
// does: the embedded FerretDB (unless a MongoDB URI is given), the five services and the
// gateway, configured through their environment variables like deploy/local/stack wires them.
package suite

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Services in start order, then the gateway: the events service first, which every other
// service's outbox relay hands its events to, and the webhook dispatcher on its database.
var Services = []string{"events", "dispatcher", "compliance", "trading", "custody", "interchange", "servicedesk"}

// binaries maps each binary to its main package, relative to the repository root.
var binaries = map[string]string{
	"ferretdb":    "./deploy/local/cmd/ferretdb",
	"servicedesk": "./services/cmd/servicedesk",
	"trading":     "./services/cmd/trading",
	"interchange": "./services/cmd/interchange",
	"custody":     "./services/cmd/custody",
	"compliance":  "./services/cmd/compliance",
	"events":      "./services/cmd/events",
	"dispatcher":  "./services/cmd/dispatcher",
	"gateway":     "./gateway/cmd/gateway",
}

// startLimit bounds the wait for one process to become ready.
const startLimit = 60 * time.Second

// Options configure the suite.
type Options struct {
	// Root is the repository root (where go.work is).
	Root string
	// Dir holds the binaries, keys, the embedded database and the processes' logs.
	Dir string
	// MongoURI, when set, is used instead of starting FerretDB.
	MongoURI string
	// CPUs pins every process of the suite to these CPUs (a taskset list); "" does not pin.
	CPUs string
	// GatewayEnv is added to the gateways' environment after the bench's defaults (the
	// capacity steps' gateway then has its load shedding turned off).
	GatewayEnv []string
	Logger     *slog.Logger
}

// Suite is the running suite.
type Suite struct {
	MongoURI   string
	GatewayURL string
	// Addrs maps a service to its gRPC address.
	Addrs map[string]string
	// Procs are the started processes in start order.
	Procs []*Proc

	opts Options
	keys keyFiles
	// webhookKeys is the events service's and the dispatcher's key-encryption keyring, made
	// for this run (WEBHOOK_KEYS).
	webhookKeys string
	extra       []*Proc // started for one scenario, not measured with Procs
	// held are the sockets hold opened, until take hands them to their process.
	held map[string]*os.File
}

// New prepares the work folder and writes the demo keys.
func New(opts Options) (*Suite, error) {
	for _, sub := range []string{"bin", "logs"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, sub), 0o750); err != nil {
			return nil, fmt.Errorf("work folder: %w", err)
		}
	}
	keys, err := writeKeys(filepath.Join(opts.Dir, "keys"))
	if err != nil {
		return nil, err
	}
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		return nil, err
	}
	return &Suite{opts: opts, keys: keys, MongoURI: opts.MongoURI, Addrs: map[string]string{},
		webhookKeys: "bench=" + base64.StdEncoding.EncodeToString(kek)}, nil
}

// KeyFile returns the path of a demo key the suite's processes read (e.g. the gateway's).
func (s *Suite) KeyFile(name string) string { return s.keys.path(name) }

// Build compiles every binary with go build into the work folder.
func (s *Suite) Build(ctx context.Context) error {
	args := []string{"build", "-o", filepath.Join(s.opts.Dir, "bin") + "/"}
	for _, pkg := range binaries {
		args = append(args, pkg)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = s.opts.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

func (s *Suite) bin(name string) string { return filepath.Join(s.opts.Dir, "bin", name) }

// StartDatabase starts FerretDB on a fresh data folder unless a MongoDB URI was given.
func (s *Suite) StartDatabase(ctx context.Context) error {
	if s.MongoURI != "" {
		return nil
	}
	dir := filepath.Join(s.opts.Dir, "ferretdb")
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear database folder: %w", err)
	}
	pr, pw := io.Pipe()
	p, err := launch("ferretdb", s.bin("ferretdb"), []string{"-dir", dir, "-addr", "127.0.0.1:0"}, nil, s.opts.CPUs, s.logDir(), pw)
	if err != nil {
		return err
	}
	s.Procs = append(s.Procs, p)
	uris := make(chan string, 1)
	go scanURI(pr, p.log, uris)
	go func() { <-p.done; _ = pw.Close() }()
	return p.waitUntil(ctx, startLimit, func(context.Context) bool {
		select {
		case s.MongoURI = <-uris:
			return true
		default:
			return false
		}
	})
}

// scanURI sends the MONGODB_URI line FerretDB prints and copies its stdout to the log.
func scanURI(r io.Reader, log io.Writer, uris chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if uri, ok := strings.CutPrefix(line, "MONGODB_URI="); ok {
			uris <- uri
		}
		fmt.Fprintln(log, line)
	}
}

func (s *Suite) logDir() string { return filepath.Join(s.opts.Dir, "logs") }

// Stop stops every process, the last started first.
func (s *Suite) Stop() error {
	var errs []error
	for _, p := range s.extra {
		errs = append(errs, p.stop(15*time.Second))
	}
	for i := len(s.Procs) - 1; i >= 0; i-- {
		errs = append(errs, s.Procs[i].stop(15*time.Second))
	}
	return errors.Join(errs...)
}

// StopServices stops the services and the gateways, the last started first, and leaves the
// database running (for what the bench measures in its own process afterwards, with nothing
// else using the database: trading's journal recovery pass, for one, would otherwise resume
// an entry that is still being applied after its grace of 30 s).
func (s *Suite) StopServices() error {
	var errs []error
	for _, p := range s.extra {
		errs = append(errs, p.stop(15*time.Second))
	}
	for i := len(s.Procs) - 1; i >= 0; i-- {
		if s.Procs[i].Name != "ferretdb" {
			errs = append(errs, s.Procs[i].stop(15*time.Second))
		}
	}
	return errors.Join(errs...)
}

// hold opens a listening socket on a free port and keeps it, as a file, for the process
// that will serve on it (take hands it over): the port is never free between the pick and
// that process's start.
func (s *Suite) hold() (string, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("hold a port: %w", err)
	}
	defer lis.Close()
	f, err := lis.(*net.TCPListener).File()
	if err != nil {
		return "", fmt.Errorf("hold a port: %w", err)
	}
	addr := lis.Addr().String()
	if s.held == nil {
		s.held = map[string]*os.File{}
	}
	s.held[addr] = f
	return addr, nil
}

// take hands over the socket held for addr (launch closes the bench's copy).
func (s *Suite) take(addr string) *os.File {
	f := s.held[addr]
	delete(s.held, addr)
	return f
}

// CPU returns the CPU time so far of every process of the suite and of the bench itself
// ("bench": the load generator, and the raw layer's driver work).
func (s *Suite) CPU() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, p := range s.Procs {
		if d, err := p.CPU(); err == nil {
			out[p.Name] = d
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		out["bench"] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return out
}
