// Package startup tests how the suite's binaries start: a start that cannot succeed ends at
// once with a non-zero exit, leaving nothing running.
package startup

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// binaries are the suite's eight main packages, relative to the repository root.
var binaries = map[string]string{
	"servicedesk": "services/cmd/servicedesk",
	"trading":     "services/cmd/trading",
	"interchange": "services/cmd/interchange",
	"custody":     "services/cmd/custody",
	"compliance":  "services/cmd/compliance",
	"events":      "services/cmd/events",
	"dispatcher":  "services/cmd/dispatcher",
	"gateway":     "gateway/cmd/gateway",
}

// build compiles every binary into a temporary folder.
func build(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, pkg := range binaries {
		args = append(args, "./"+pkg)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// env is a configuration each binary accepts up to opening its ports: demo keys, a
// database nobody needs to reach (the ports open before the database is dialled), and
// every address free unless the test takes one.
func env(name string) []string {
	keys, _ := filepath.Abs("../demo")
	key := func(f string) string { return filepath.Join(keys, f) }
	common := []string{"PRODUCTION=false", "LOG_LEVEL=info", "MONGODB_URI=mongodb://127.0.0.1:1/", "METRICS_ADDR=127.0.0.1:0"}
	if name == "gateway" {
		return append(common, "HTTP_ADDR=127.0.0.1:0", "PRINCIPAL_PRIVATE_KEY_FILE="+key("gateway-principal.pem"))
	}
	identity := map[string]string{"servicedesk": "servicedesk-internal", "interchange": "interchange-internal", "custody": "custody-internal",
		"trading": "trading-internal", "compliance": "compliance-internal"}
	out := append(common, "GRPC_ADDR=127.0.0.1:0", "PRINCIPAL_PUBLIC_KEY_FILE="+key("gateway-principal.pub.pem"),
		"OPERATOR_PRIVATE_KEY_FILE="+key("operator.pem"))
	if file, ok := identity[name]; ok {
		out = append(out, "SERVICE_PRIVATE_KEY_FILE="+key(file+".pem"))
	}
	if name == "dispatcher" {
		// A throw-away keyring: 32 zero bytes.
		out = append(out, "WEBHOOK_KEYS=t=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "WEBHOOK_KEY_CURRENT=t")
	}
	return out
}

// TestTakenPortEndsTheStart starts every binary with one of its ports held by the test:
// each must exit non-zero within seconds and say which setting failed. Before the services
// opened their ports first, the service desk kept running its sweeper after its server
// failed, and never exited.
func TestTakenPortEndsTheStart(t *testing.T) {
	dir := build(t)
	for name := range binaries {
		apiPort := "GRPC_ADDR"
		if name == "gateway" {
			apiPort = "HTTP_ADDR"
		}
		for _, setting := range []string{apiPort, "METRICS_ADDR"} {
			t.Run(name+"/"+setting, func(t *testing.T) {
				t.Parallel()
				taken, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer taken.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, filepath.Join(dir, name))
				cmd.Env = append(append(os.Environ(), env(name)...), setting+"="+taken.Addr().String())
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				start := time.Now()
				err = cmd.Run()
				if ctx.Err() != nil {
					t.Fatalf("%s still running after %s with %s taken:\n%s", name, time.Since(start).Round(time.Millisecond), setting, out.String())
				}
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() == 0 {
					t.Fatalf("%s ended with %v, want a non-zero exit:\n%s", name, err, out.String())
				}
				if !strings.Contains(out.String(), setting) || !strings.Contains(out.String(), "address already in use") {
					t.Errorf("%s's output does not name %s and the taken address:\n%s", name, setting, out.String())
				}
			})
		}
	}
}
