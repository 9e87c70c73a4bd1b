package config_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/config"
)

func writePublicKey(t *testing.T, dir, name string) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func valid() config.Common {
	return config.Common{MongoURI: "mongodb://127.0.0.1:27017", LogLevel: "info", ShutdownTimeout: time.Second, HealthInterval: time.Second}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    func(*config.Common)
		wantErr string
	}{
		{name: "valid", give: func(*config.Common) {}},
		{name: "bad uri", give: func(c *config.Common) { c.MongoURI = "http://x" }, wantErr: "MONGODB_URI"},
		{name: "bad level", give: func(c *config.Common) { c.LogLevel = "loud" }, wantErr: "LOG_LEVEL"},
		{name: "zero shutdown", give: func(c *config.Common) { c.ShutdownTimeout = 0 }, wantErr: "SHUTDOWN_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.give(&c)
			err := c.Validate("svc")
			if tt.wantErr == "" {
				if err != nil || c.Database != "svc" {
					t.Fatalf("Validate() = %v, database %q; want nil and the default database", err, c.Database)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tt.wantErr)
			}
		})
	}
}

func TestLoadFromEnvironment(t *testing.T) {
	t.Setenv("MONGODB_URI", "mongodb://db:27017")
	t.Setenv("GRPC_ADDR", ":9100")
	t.Setenv("PRINCIPAL_PUBLIC_KEY_FILE", "/keys/gw.pem")
	var cfg struct{ config.Common }
	if err := config.Load(context.Background(), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MongoURI != "mongodb://db:27017" || cfg.GRPCAddr != ":9100" || cfg.ShutdownTimeout != 20*time.Second {
		t.Errorf("Load() = %+v, want the environment's values and defaults", cfg.Common)
	}
}

func TestLoadRequiresMongoURI(t *testing.T) {
	t.Setenv("MONGODB_URI", "")
	os.Unsetenv("MONGODB_URI") // restored by t.Setenv's cleanup
	t.Setenv("PRINCIPAL_PUBLIC_KEY_FILE", "/keys/gw.pem")
	var cfg struct{ config.Common }
	if err := config.Load(context.Background(), &cfg); err == nil || !strings.Contains(err.Error(), "MONGODB_URI") {
		t.Fatalf("Load() without MONGODB_URI = %v, want an error naming it", err)
	}
}

func TestTrustedIssuers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := valid()
	c.PrincipalPublicKeyFile = writePublicKey(t, dir, "gw.pem")
	c.InternalPublicKeys = "settlement=" + writePublicKey(t, dir, "se.pem")
	keys, err := c.TrustedIssuers()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys["gateway"] == nil || keys["settlement"] == nil {
		t.Errorf("TrustedIssuers() = %v, want gateway and settlement", keys)
	}
	c.InternalPublicKeys = "broken"
	if _, err := c.TrustedIssuers(); err == nil {
		t.Error("TrustedIssuers() accepted an entry without name=path")
	}
	c.InternalPublicKeys = ""
	c.PrincipalPublicKeyFile = filepath.Join(dir, "missing.pem")
	if _, err := c.TrustedIssuers(); err == nil {
		t.Error("TrustedIssuers() accepted a missing key file")
	}
}

// TestReflection: gRPC reflection lists every method to whoever reaches the port, so it is
// off in production unless asked for, and on elsewhere unless turned off.
func TestReflection(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		production bool
		setting    string
		want       bool
		wantErr    bool
	}{
		{false, "", true, false},
		{true, "", false, false},
		{true, "true", true, false},
		{false, "false", false, false},
		{true, "yes", false, true},
	} {
		c := config.Common{Production: tt.production, GRPCReflection: tt.setting}
		got, err := c.Reflection()
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("PRODUCTION=%v GRPC_REFLECTION=%q: %v, %v; want %v (error %v)", tt.production, tt.setting, got, err, tt.want, tt.wantErr)
		}
	}
}
