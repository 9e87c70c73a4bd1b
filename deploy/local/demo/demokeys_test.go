package demo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/signing"
)

// publishedKeys are every public key file shipped with the repository.
func publishedKeys(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.pub.pem", "../../k8s/base/secrets/*public.pem"} {
		found, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	if len(files) == 0 {
		t.Fatal("no published keys found")
	}
	return files
}

// TestDemoKeysAreKnown keeps the production refusal list equal to the keys shipped: a new
// demo key that is not on the list would be accepted in production.
func TestDemoKeysAreKnown(t *testing.T) {
	t.Parallel()
	files := publishedKeys(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := signing.ParsePublicKey(string(data))
		if err != nil {
			pub, err = ecPublic(data)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !config.IsDemoKey(pub) {
			fp, _ := config.Fingerprint(pub)
			t.Errorf("%s (fingerprint %s) is not in platform/config's demo key list", f, fp)
		}
	}
	if config.DemoKeyCount() != len(files) {
		t.Errorf("the demo key list holds %d keys, the repository ships %d", config.DemoKeyCount(), len(files))
	}
}

func TestProductionRefusesDemoKeyFiles(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"gateway-principal.pem", "gateway-principal.pub.pem", "operator.pem", "../../k8s/base/secrets/principal-private.pem"} {
		if err := config.RefuseDemoKeyFiles(f); err == nil || !strings.Contains(err.Error(), "demo key") {
			t.Errorf("RefuseDemoKeyFiles(%s) = %v, want a refusal", f, err)
		}
	}
	fresh := filepath.Join(t.TempDir(), "fresh.pem")
	writeFreshKey(t, fresh)
	if err := config.RefuseDemoKeyFiles(fresh); err != nil {
		t.Errorf("a fresh key was refused: %v", err)
	}
}
