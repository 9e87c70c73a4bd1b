package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDataDirFromAnyFolder: suitectl finds the running suite's services file from any folder
// below the one make run ran in, without DATA_DIR; DATA_DIR still wins.
func TestDataDirFromAnyFolder(t *testing.T) {
	root := t.TempDir()
	want := filepath.Join(root, ".data")
	deep := filepath.Join(root, "services", "trading")
	if err := os.MkdirAll(want, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(want, "services.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DATA_DIR", "")
	t.Chdir(deep)
	if got := dataDir(); got != want {
		t.Errorf("dataDir() = %q from %s, want %q", got, deep, want)
	}
	t.Setenv("DATA_DIR", "/elsewhere")
	if got := dataDir(); got != "/elsewhere" {
		t.Errorf("dataDir() = %q with DATA_DIR set, want it", got)
	}
}
