package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zcustody/suite/deploy/local/demo"
)

// internalIssuers are the internal identities every service trusts: issuer → demo key file
// (as deploy/local/stack wires them).
var internalIssuers = map[string]string{
	"servicedesk":       "servicedesk-internal",
	"interchange":       "interchange-internal",
	"custody":           "custody-internal",
	"trading":           "trading-internal",
	"compliance":        "compliance-internal",
	"settlement-engine": "settlement-engine",
}

// keyFiles is where the demo keys were written for the processes to read.
type keyFiles struct{ dir string }

func (k keyFiles) path(name string) string { return filepath.Join(k.dir, name) }

// trusted is INTERNAL_PUBLIC_KEYS of the services.
func (k keyFiles) trusted() string {
	var parts []string
	for issuer, file := range internalIssuers {
		parts = append(parts, issuer+"="+k.path(file+".pub.pem"))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// identity is SERVICE_PRIVATE_KEY_FILE of a service that calls others ("" for the rest).
func (k keyFiles) identity(service string) string {
	if file, ok := internalIssuers[service]; ok {
		return k.path(file + ".pem")
	}
	return ""
}

// writeKeys writes the demo keys the processes load into dir.
func writeKeys(dir string) (keyFiles, error) {
	names := []string{"gateway-principal.pem", "gateway-principal.pub.pem", "operator.pem", "operator.pub.pem"}
	for _, file := range internalIssuers {
		names = append(names, file+".pem", file+".pub.pem")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return keyFiles{}, fmt.Errorf("key folder: %w", err)
	}
	for _, name := range names {
		data, err := demo.Key(name)
		if err != nil {
			return keyFiles{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return keyFiles{}, fmt.Errorf("write key: %w", err)
		}
	}
	return keyFiles{dir: dir}, nil
}
