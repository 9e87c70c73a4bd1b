package mongodb_test

import (
	"testing"
	"time"

	"github.com/zcustody/suite/services/mongodb"
)

// FerretDB ignores write and read concerns, so the production durability settings are
// checked on the options the services build.
func TestClientOptionsAreDurable(t *testing.T) {
	t.Parallel()
	opts := mongodb.ClientOptions("mongodb://db.example:27017/?replicaSet=rs0")
	wc := opts.WriteConcern
	if wc == nil || wc.W != "majority" || wc.Journal == nil || !*wc.Journal {
		t.Errorf("write concern = %+v, want majority with journal", wc)
	}
	if opts.ReadConcern == nil || opts.ReadConcern.Level != "majority" {
		t.Errorf("read concern = %+v, want majority", opts.ReadConcern)
	}
	if opts.RetryWrites != nil && !*opts.RetryWrites {
		t.Error("retryable writes are off, want the driver default (on)")
	}
	if opts.Timeout == nil || *opts.Timeout <= 0 || *opts.Timeout > time.Minute {
		t.Errorf("operation timeout = %v, want a bounded timeout", opts.Timeout)
	}
	if opts.ServerSelectionTimeout == nil || *opts.ServerSelectionTimeout > 30*time.Second {
		t.Errorf("server selection timeout = %v, want at most 30s", opts.ServerSelectionTimeout)
	}
	if len(opts.Hosts) != 1 || opts.ReplicaSet == nil || *opts.ReplicaSet != "rs0" {
		t.Errorf("URI not applied: hosts %v replica set %v", opts.Hosts, opts.ReplicaSet)
	}
}
