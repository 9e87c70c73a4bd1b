package auth_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/gateway/internal/auth"
	"github.com/zcustody/suite/platform/testdb"
)

func TestReplayStoreRefusesSecondUse(t *testing.T) {
	t.Parallel()
	s := auth.NewReplayStore(testdb.New(t))
	ctx := t.Context()
	expires := time.Now().Add(10 * time.Minute)
	if err := s.Claim(ctx, "ZTEST", "r-1", expires); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if err := s.Claim(ctx, "ZTEST", "r-1", expires); !errors.Is(err, auth.ErrReplay) {
		t.Errorf("second use = %v, want ErrReplay", err)
	}
	if err := s.Claim(ctx, "ZOTHER", "r-1", expires); err != nil {
		t.Errorf("the same identifier from another company = %v, want accepted", err)
	}
}

// Many requests at once, some reusing an identifier: exactly one use of each identifier is
// accepted, whichever insert carried it, and fewer inserts than claims reach the database.
func TestReplayStoreConcurrentClaimsOneWinnerEach(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	var inserts atomic.Int64
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "insert" && e.DatabaseName == db.Name() {
			inserts.Add(1)
		}
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(os.Getenv("MONGODB_URI")).SetMonitor(monitor))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	s := auth.NewReplayStore(client.Database(db.Name()))

	const ids, usesEach = 40, 5
	var accepted, replays [ids]atomic.Int32
	var failures atomic.Int32
	var wg sync.WaitGroup
	for i := range ids * usesEach {
		wg.Go(func() {
			id := i % ids
			err := s.Claim(t.Context(), "ZTEST", "r-"+string(rune('A'+id)), time.Now().Add(time.Minute))
			switch {
			case err == nil:
				accepted[id].Add(1)
			case errors.Is(err, auth.ErrReplay):
				replays[id].Add(1)
			default:
				failures.Add(1)
				t.Errorf("claim: %v", err)
			}
		})
	}
	wg.Wait()
	for id := range ids {
		if accepted[id].Load() != 1 || replays[id].Load() != usesEach-1 {
			t.Errorf("identifier %d: accepted %d times, refused %d, want 1 and %d", id, accepted[id].Load(), replays[id].Load(), usesEach-1)
		}
	}
	stored, err := db.Collection("request_ids").CountDocuments(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if stored != ids {
		t.Errorf("stored identifiers = %d, want %d", stored, ids)
	}
	if n := inserts.Load(); n >= ids*usesEach {
		t.Errorf("%d claims took %d inserts, want them grouped", ids*usesEach, n)
	} else {
		t.Logf("%d claims in %d inserts", ids*usesEach, n)
	}
}

// A caller that has gone before its claim is written does not spend the identifier.
func TestReplayStoreSkipsAbandonedClaims(t *testing.T) {
	t.Parallel()
	s := auth.NewReplayStore(testdb.New(t))
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Claim(gone, "ZTEST", "r-1", time.Now().Add(time.Minute)); !errors.Is(err, context.Canceled) {
		t.Fatalf("claim after the caller left = %v, want context.Canceled", err)
	}
	if err := s.Claim(t.Context(), "ZTEST", "r-1", time.Now().Add(time.Minute)); err != nil {
		t.Errorf("the identifier after an abandoned claim = %v, want accepted", err)
	}
}

// When the database cannot be written, the claims fail; none is taken for a replay.
func TestReplayStoreDatabaseFailureIsNotReplay(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	client, err := mongo.Connect(options.Client().ApplyURI(os.Getenv("MONGODB_URI")))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Disconnect(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := auth.NewReplayStore(client.Database(db.Name()))
	err = s.Claim(t.Context(), "ZTEST", "r-1", time.Now().Add(time.Minute))
	if err == nil || errors.Is(err, auth.ErrReplay) {
		t.Errorf("claim on a closed client = %v, want a database error", err)
	}
}

// BenchmarkReplayClaim compares group-committed claims with one InsertOne per claim, at
// several numbers of concurrent callers.
func BenchmarkReplayClaim(b *testing.B) {
	db := testdb.New(b)
	s := auth.NewReplayStore(db)
	col := db.Collection("request_ids_single")
	var n atomic.Int64
	for _, callers := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("grouped/callers=%d", callers), func(b *testing.B) {
			b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Claim(b.Context(), "ZTEST", strconv.FormatInt(n.Add(1), 10), time.Now().Add(time.Minute)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(fmt.Sprintf("insertOne/callers=%d", callers), func(b *testing.B) {
			b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					doc := bson.D{{Key: "_id", Value: "ZTEST:" + strconv.FormatInt(n.Add(1), 10)}, {Key: "expiresAt", Value: time.Now().Add(time.Minute)}}
					if _, err := col.InsertOne(b.Context(), doc); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
