package embeddb_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/zcustody/suite/deploy/local/embeddb"
)

// startDB starts an embedded server in a fresh folder and stops it when the test ends.
func startDB(t *testing.T, dir string) *embeddb.DB {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	begin := time.Now()
	db, err := embeddb.Start(t.Context(), embeddb.Config{Dir: dir, Addr: "127.0.0.1:0", Logger: logger})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("embeddb.Start took %v, uri %s", time.Since(begin), db.URI())
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// connect opens a client with the options production uses: majority, journaled writes,
// retryable writes and reads.
func connect(t *testing.T, uri string) *mongo.Client {
	t.Helper()
	wc := writeconcern.Majority()
	wc.Journal = new(true)
	opts := options.Client().ApplyURI(uri).
		SetWriteConcern(wc).
		SetRetryWrites(true).
		SetRetryReads(true)
	client, err := mongo.Connect(opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := client.Disconnect(context.Background()); err != nil {
			t.Errorf("Disconnect: %v", err)
		}
	})
	return client
}

// race runs f n times concurrently and returns the errors, one per call.
func race(n int, f func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errs
}

func TestUniqueIndexRace(t *testing.T) {
	t.Parallel()
	db := startDB(t, t.TempDir())
	coll := connect(t, db.URI()).Database("embeddb").Collection("dedupe")
	ctx := t.Context()
	_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "key", Value: 1}},
		Options: options.Index().SetUnique(true),
	})
	if err != nil {
		t.Fatalf("CreateOne index: %v", err)
	}

	errs := race(50, func(i int) error {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "key", Value: "same"}})
		return err
	})

	var ok, dup int
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case mongo.IsDuplicateKeyError(err):
			dup++
		default:
			t.Errorf("InsertOne: unexpected error %v", err)
		}
	}
	if ok != 1 || dup != 49 {
		t.Errorf("got %d inserted and %d duplicate-key errors, want 1 and 49", ok, dup)
	}
}

func TestConditionalUpdateRace(t *testing.T) {
	t.Parallel()
	db := startDB(t, t.TempDir())
	coll := connect(t, db.URI()).Database("embeddb").Collection("occ")
	ctx := t.Context()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "w1"}, {Key: "version", Value: 0}}); err != nil {
		t.Fatalf("InsertOne: %v", err)
	}

	modified := make([]int64, 20)
	errs := race(20, func(i int) error {
		res, err := coll.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: "w1"}, {Key: "version", Value: 0}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: 1}, {Key: "winner", Value: i}}}},
		)
		if err == nil {
			modified[i] = res.ModifiedCount
		}
		return err
	})

	var wins int64
	for i, err := range errs {
		if err != nil {
			t.Errorf("UpdateOne %d: %v", i, err)
		}
		wins += modified[i]
	}
	if wins != 1 {
		t.Errorf("got %d updates with ModifiedCount 1, want exactly 1", wins)
	}
}

func TestFindOneAndUpdateReturnsAfter(t *testing.T) {
	t.Parallel()
	db := startDB(t, t.TempDir())
	coll := connect(t, db.URI()).Database("embeddb").Collection("counters")
	ctx := t.Context()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "c"}, {Key: "n", Value: 1}, {Key: "version", Value: 0}}); err != nil {
		t.Fatalf("InsertOne: %v", err)
	}

	var got struct {
		N       int `bson:"n"`
		Version int `bson:"version"`
	}
	err := coll.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: "c"}, {Key: "version", Value: 0}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 41}, {Key: "version", Value: 1}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After),
	).Decode(&got)
	if err != nil {
		t.Fatalf("FindOneAndUpdate: %v", err)
	}
	if got.N != 42 || got.Version != 1 {
		t.Errorf("got n=%d version=%d, want the updated document n=42 version=1", got.N, got.Version)
	}

	err = coll.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: "c"}, {Key: "version", Value: 0}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}},
	).Err()
	if !errors.Is(err, mongo.ErrNoDocuments) {
		t.Errorf("FindOneAndUpdate on stale version: got %v, want mongo.ErrNoDocuments", err)
	}
}

func TestFindOneAndUpdateRace(t *testing.T) {
	t.Parallel()
	db := startDB(t, t.TempDir())
	coll := connect(t, db.URI()).Database("embeddb").Collection("claims")
	ctx := t.Context()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "job"}, {Key: "state", Value: "PENDING"}}); err != nil {
		t.Fatalf("InsertOne: %v", err)
	}

	errs := race(20, func(i int) error {
		return coll.FindOneAndUpdate(ctx,
			bson.D{{Key: "_id", Value: "job"}, {Key: "state", Value: "PENDING"}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: "CLAIMED"}, {Key: "by", Value: i}}}},
			options.FindOneAndUpdate().SetReturnDocument(options.After),
		).Err()
	})

	var wins, misses int
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, mongo.ErrNoDocuments):
			misses++
		default:
			t.Errorf("FindOneAndUpdate %d: %v", i, err)
		}
	}
	if wins != 1 || misses != 19 {
		t.Errorf("got %d claims and %d misses, want 1 and 19", wins, misses)
	}
}

// TestConcurrentClients checks that SQLite's locking does not surface as errors when two
// clients write at once.
func TestConcurrentClients(t *testing.T) {
	t.Parallel()
	db := startDB(t, t.TempDir())
	clients := []*mongo.Client{connect(t, db.URI()), connect(t, db.URI())}
	ctx := t.Context()
	const workers, perWorker = 8, 50

	errs := race(workers, func(w int) error {
		coll := clients[w%len(clients)].Database("embeddb").Collection("load")
		for i := range perWorker {
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("%d-%d", w, i)}}); err != nil {
				return fmt.Errorf("worker %d insert %d: %w", w, i, err)
			}
		}
		return nil
	})

	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	n, err := clients[0].Database("embeddb").Collection("load").CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatalf("CountDocuments: %v", err)
	}
	if n != workers*perWorker {
		t.Errorf("got %d documents, want %d", n, workers*perWorker)
	}
}

func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()

	first, err := embeddb.Start(ctx, embeddb.Config{Dir: dir})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	uri := first.URI()
	client := connect(t, uri)
	if _, err := client.Database("embeddb").Collection("kept").InsertOne(ctx, bson.D{{Key: "_id", Value: "x"}}); err != nil {
		t.Fatalf("InsertOne: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	second := startDB(t, dir)
	n, err := connect(t, second.URI()).Database("embeddb").Collection("kept").CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatalf("CountDocuments after restart: %v", err)
	}
	if n != 1 {
		t.Errorf("got %d documents after restart, want 1", n)
	}
}

func TestStartAddrInUse(t *testing.T) {
	t.Parallel()
	first := startDB(t, t.TempDir())
	addr := strings.TrimSuffix(strings.TrimPrefix(first.URI(), "mongodb://"), "/")

	second, err := embeddb.Start(t.Context(), embeddb.Config{Dir: t.TempDir(), Addr: addr})
	if err == nil {
		_ = second.Close()
		t.Fatalf("Start on %s, already in use: got no error", addr)
	}
}

func TestProfileNamesCommandAndCollection(t *testing.T) {
	var profile strings.Builder // read once the server is closed: no write races the read
	db, err := embeddb.Start(t.Context(), embeddb.Config{Dir: t.TempDir(), Profile: &profile,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI(db.URI()))
	if err != nil {
		t.Fatal(err)
	}
	coll := client.Database("profiled").Collection("wallets")
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "w1"}}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if err := coll.FindOne(t.Context(), bson.D{{Key: "_id", Value: "w1"}}).Err(); err != nil {
		t.Fatalf("find: %v", err)
	}
	_ = client.Disconnect(t.Context())
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(profile.String()), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("profile line %q: want command, collection, microseconds", l)
		}
		seen[f[0]+" "+f[1]] = true
	}
	for _, want := range []string{"insert wallets", "find wallets"} {
		if !seen[want] {
			t.Errorf("profile has no %q line; got:\n%s", want, profile.String())
		}
	}
}
