package servicedesk_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/servicedesk"
)

// architecture is docs/architecture.md, seen from this package.
const architecture = "../../docs/architecture.md"

// TestStateDiagramsMatchTheTables: each state diagram of docs/architecture.md draws exactly
// the moves its transition table allows, between the statuses the code declares.
func TestStateDiagramsMatchTheTables(t *testing.T) {
	t.Parallel()
	diagrams := stateDiagrams(t)
	tables := []struct {
		heading  string
		statuses []string
		allowed  func(from, to string) bool
	}{
		{"Service request", servicedesk.Statuses, servicedesk.Allowed},
		{"Settlement", settlement.Statuses(), settlement.Allowed},
		{"Withdrawal", withdrawal.Statuses(), withdrawal.Allowed},
		{"Whitelisted address", address.Statuses(), address.Allowed},
	}
	for _, tt := range tables {
		drawn, ok := diagrams[tt.heading]
		if !ok {
			t.Errorf("%s has no state diagram under ### %s", architecture, tt.heading)
			continue
		}
		want := map[string]bool{}
		for _, from := range tt.statuses {
			for _, to := range tt.statuses {
				if tt.allowed(from, to) {
					want[from+" → "+to] = true
				}
			}
		}
		if diff := cmp.Diff(want, drawn); diff != "" {
			t.Errorf("%s: diagram against the transition table (-table +diagram):\n%s", tt.heading, diff)
		}
	}
}

var (
	alias = regexp.MustCompile(`^state "([^"]+)" as (\S+)$`)
	arrow = regexp.MustCompile(`^(\S+) --> (\S+)`)
)

// stateDiagrams reads the moves each stateDiagram-v2 block draws (start and end markers
// left out), by the heading above it.
func stateDiagrams(t *testing.T) map[string]map[string]bool {
	t.Helper()
	f, err := os.Open(architecture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]bool{}
	var heading string
	var moves map[string]bool
	names := map[string]string{}
	name := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "### "):
			heading = strings.TrimPrefix(line, "### ")
		case line == "stateDiagram-v2":
			moves, names = map[string]bool{}, map[string]string{}
			out[heading] = moves
		case line == "```":
			moves = nil
		case moves == nil: // outside a diagram
		case alias.MatchString(line):
			m := alias.FindStringSubmatch(line)
			names[m[2]] = m[1]
		case arrow.MatchString(line):
			m := arrow.FindStringSubmatch(line)
			if m[1] != "[*]" && m[2] != "[*]" {
				moves[name(m[1])+" → "+name(m[2])] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDomainPackagesImportNoTransport keeps the domain packages plain Go, as
// docs/architecture.md lays a service out: no file imports gRPC, protobuf, the generated
// API or the database driver; the server and store packages map to and from them.
func TestDomainPackagesImportNoTransport(t *testing.T) {
	t.Parallel()
	dirs := []string{".", "../trading", "../custody", "../compliance", "../interchange/settlement",
		"../interchange/withdrawal", "../interchange/whitelist/address"}
	banned := []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/zcustody/suite/proto/", "go.mongodb.org/"}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, b := range banned {
					if strings.HasPrefix(path, b) {
						t.Errorf("%s imports %s", name, path)
					}
				}
			}
		}
	}
}
