// Package demo holds the demo data of the local stack: companies, users and their keys,
// VASPs. Everything here is DEMO ONLY (see README.md).
package demo

import (
	"embed"
	"fmt"
)

//go:embed *.pem
var keys embed.FS

// Key returns the PEM bytes of the demo key file name (e.g. "ztest-company.pem").
func Key(name string) ([]byte, error) {
	data, err := keys.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("demo key %s: %w", name, err)
	}
	return data, nil
}
