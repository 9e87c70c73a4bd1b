package mongodb_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/testdb"
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

// TestSearchesCarryMaxTimeMS: a page read with FindPage and its Count reach the server with
// maxTimeMS, bounded by the caller's deadline and never beyond SearchTimeout, so that the
// server itself stops a search nobody waits for (issue 12 item 2). Checked on the wire.
func TestSearchesCarryMaxTimeMS(t *testing.T) {
	t.Parallel()
	uri := os.Getenv("MONGODB_URI")
	if uri == "" {
		testdb.New(t) // skips, or fails under CI
	}
	var mu sync.Mutex
	var sent []string
	opts := mongodb.ClientOptions(uri).SetMonitor(&event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "find" && e.CommandName != "aggregate" {
			return
		}
		ms := int64(-1)
		if v, err := e.Command.LookupErr("maxTimeMS"); err == nil {
			ms = v.AsInt64()
		}
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, fmt.Sprintf("%s %d", e.CommandName, ms))
	}})
	client, err := mongo.Connect(opts)
	if err != nil {
		t.Fatal(err)
	}
	db := client.Database(testdb.New(t).Name())
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	coll := db.Collection("c")
	ctx := context.Background()
	for i := range 5 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("d%d", i)}, {Key: "n", Value: i}, {Key: "k", Value: i % 2}}); err != nil {
			t.Fatal(err)
		}
	}
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := sent
		sent = nil
		return out
	}
	bound := func(cmds []string, name string, most int64) {
		t.Helper()
		if len(cmds) != 1 {
			t.Fatalf("commands %v, want one %s", cmds, name)
		}
		var got int64
		if _, err := fmt.Sscanf(cmds[0], name+" %d", &got); err != nil || got <= 0 || got > most {
			t.Errorf("%q, want %s with maxTimeMS 1..%d", cmds[0], name, most)
		}
	}

	type doc struct {
		ID string `bson:"_id"`
		N  int    `bson:"n"`
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	page, err := mongodb.FindPage[doc](short, coll, mongodb.Query{
		Filter: bson.D{{Key: "k", Value: 0}}, Sort: bson.D{{Key: "n", Value: -1}}, Skip: 1, Limit: 5,
	})
	if err != nil {
		t.Fatalf("FindPage: %v", err)
	}
	if want := []doc{{"d2", 2}, {"d0", 0}}; !slices.Equal(page, want) {
		t.Errorf("FindPage = %v, want %v (k=0, n descending, skip 1)", page, want)
	}
	bound(take(), "find", 2000)

	// A caller without a deadline gets SearchTimeout, on the page and on its count.
	if page, err = mongodb.FindPage[doc](ctx, coll, mongodb.Query{Limit: 2, Sort: bson.D{{Key: "_id", Value: 1}}}); err != nil || len(page) != 2 || page[0].ID != "d0" {
		t.Errorf("FindPage = %v, %v; want d0, d1", page, err)
	}
	bound(take(), "find", mongodb.SearchTimeout.Milliseconds())
	if n, err := mongodb.Count(ctx, coll, bson.D{{Key: "k", Value: 1}}); err != nil || n != 2 {
		t.Errorf("Count = %d, %v; want 2", n, err)
	}
	bound(take(), "aggregate", mongodb.SearchTimeout.Milliseconds())

	if _, err := mongodb.FindPage[doc](ctx, coll, mongodb.Query{}); err == nil {
		t.Error("FindPage without a limit succeeded, want an error")
	}
}

// TestEnsureIndexes: the declared indexes exist with their keys and options, and ensuring
// them again (a restart) changes nothing. (FerretDB keeps no sparse option to list.)
func TestEnsureIndexes(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	indexes := []mongodb.Index{
		{Collection: "a", Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		{Collection: "a", Name: "intent_id", Keys: mongodb.Keys("intent.id"), Unique: true, Sparse: true},
		{Collection: "b", Name: "expires", Keys: bson.D{{Key: "expiresAt", Value: -1}}},
	}
	for range 2 {
		if err := mongodb.EnsureIndexes(ctx, db, indexes); err != nil {
			t.Fatal(err)
		}
	}
	type spec struct {
		Name   string `bson:"name"`
		Key    bson.D `bson:"key"`
		Unique bool   `bson:"unique"`
	}
	var got []spec
	for _, col := range []string{"a", "b"} {
		cur, err := db.Collection(col).Indexes().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var specs []spec
		if err := cur.All(ctx, &specs); err != nil {
			t.Fatal(err)
		}
		for _, s := range specs {
			if s.Name != "_id_" {
				got = append(got, s)
			}
		}
	}
	var want []spec
	for _, ix := range indexes {
		want = append(want, spec{Name: ix.Name, Key: ix.Keys, Unique: ix.Unique})
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b bson.D) bool { return fmt.Sprint(a) == fmt.Sprint(b) })); diff != "" {
		t.Errorf("indexes (-want +got):\n%s", diff)
	}
}
