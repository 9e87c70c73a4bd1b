//go:build unix

package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCtrlCExitsZero runs the suite as `make run` does, through `go run`, on a terminal (a
// pseudo-terminal from script(1)), waits until it is up, types Ctrl-C, and expects the clean
// stop and exit status 0: without the suite taking the terminal's foreground, `go run` (and
// make above it) would get the interrupt too and fail.
func TestCtrlCExitsZero(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("script(1) (util-linux) is needed to give the suite a terminal")
		}
		t.Skip("script(1) is not installed")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qec", "go run .", "/dev/null")
	cmd.Env = append(os.Environ(), "DATA_DIR="+filepath.Join(dir, "data"), "HTTP_ADDR=127.0.0.1:0", "MONGODB_URI=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Press Ctrl-C to stop.") {
			break
		}
	}
	if _, err := stdin.Write([]byte{3}); err != nil { // what the terminal sends for Ctrl-C
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	seen.Write(rest)
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("exit: %v, want status 0\n%s", err, seen.String())
	}
	if !strings.Contains(seen.String(), "stopping") {
		t.Errorf("the suite did not stop cleanly:\n%s", seen.String())
	}
}
