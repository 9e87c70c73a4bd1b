// Package testdb gives store tests a fresh database on the real MongoDB-protocol server named
// by MONGODB_URI (make test starts the embedded FerretDB and sets it). Without a server the
// tests skip, except under CI=true, where a missing database is a failure.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/mongodb"
)

// New returns an empty database that is dropped when the test ends. Under CheckIndexes, its
// client records the shapes of the queries it sends.
func New(t testing.TB) *mongo.Database {
	t.Helper()
	uri := os.Getenv("MONGODB_URI")
	if uri == "" {
		missing(t, "MONGODB_URI is not set (run the tests with make test)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	opts := mongodb.ClientOptions(uri)
	if recording != nil {
		opts.SetMonitor(recording.Monitor())
	}
	client, err := mongodb.ConnectWith(ctx, opts)
	if err != nil {
		missing(t, "database unreachable: "+err.Error())
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	db := client.Database("test_" + hex.EncodeToString(suffix))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = db.Drop(ctx)
		_ = client.Disconnect(ctx)
	})
	return db
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("database test cannot run: %s", why)
	}
	t.Skipf("database test skipped: %s", why)
}
