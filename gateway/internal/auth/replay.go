package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
)

// colRequestIDs holds the request identifiers, one document per company and identifier.
const colRequestIDs = "request_ids"

// ErrReplay is returned when a request identifier was already used by the company.
var ErrReplay = errors.New("request identifier already used")

// Claims that arrive while the inserts under way are busy go together in the next one, at
// most maxClaimBatch per insert and maxClaimInserts inserts at once; an insert that takes
// longer than claimTimeout fails its claims.
const (
	maxClaimBatch   = 512
	maxClaimInserts = 2
	claimTimeout    = 10 * time.Second
)

// ReplayStore remembers request identifiers per company in the gateway's own collection,
// shared by every gateway replica: a unique _id makes the second use fail on any replica.
//
// Claims are group-committed: at most maxClaimInserts inserts are under way at a time, and
// the claims that arrive meanwhile wait for the next, which writes them all in one unordered
// InsertMany. At low load every claim is its own insert, made by its own caller (no timer, no
// hand-over); under load one database round trip and one commit serve many requests. Each
// claim still gets its own answer: a duplicate key at its index is ErrReplay for that claim
// alone.
type ReplayStore struct {
	col *mongo.Collection

	mu      sync.Mutex
	pending []*pendingClaim
	writers int // inserts under way or about to be, at most maxClaimInserts
}

type pendingClaim struct {
	ctx  context.Context
	doc  bson.D
	done chan error // buffered: the flusher never blocks on a caller that gave up
}

// NewReplayStore returns the store on db.
func NewReplayStore(db *mongo.Database) *ReplayStore {
	return &ReplayStore{col: db.Collection(colRequestIDs)}
}

// ReplayIndexes are the indexes of the replay store: the sweeper's.
func ReplayIndexes() []mongodb.Index {
	return []mongodb.Index{{Collection: colRequestIDs, Name: "expires", Keys: mongodb.Keys("expiresAt")}}
}

// EnsureIndexes creates the ReplayIndexes.
func (s *ReplayStore) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, s.col.Database(), ReplayIndexes())
}

// Claim records the identifier; ErrReplay if it was seen before. When ctx ends first, Claim
// returns its error; the identifier may still be recorded (as with any write whose answer
// was lost), so a retry must use a new identifier.
func (s *ReplayStore) Claim(ctx context.Context, company, requestID string, expires time.Time) error {
	c := &pendingClaim{ctx: ctx, done: make(chan error, 1),
		doc: bson.D{{Key: "_id", Value: company + ":" + requestID}, {Key: "expiresAt", Value: expires}}}
	s.mu.Lock()
	s.pending = append(s.pending, c)
	write := s.writers < maxClaimInserts
	if write {
		s.writers++
	}
	s.mu.Unlock()
	if write && s.insertNext() {
		go s.drain() // claims queued behind this caller's: a writer of their own takes over
	}
	select {
	case err := <-c.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain inserts the pending claims, a batch at a time, until none are left.
func (s *ReplayStore) drain() {
	for s.insertNext() {
	}
}

// insertNext inserts the next batch of pending claims. It reports whether more are pending,
// in which case the caller stays a writer and must go on; otherwise it has given up its place.
func (s *ReplayStore) insertNext() bool {
	s.mu.Lock()
	n := min(len(s.pending), maxClaimBatch)
	batch := make([]*pendingClaim, 0, n)
	for _, c := range s.pending[:n] {
		if c.ctx.Err() == nil { // its caller has gone: do not spend the identifier
			batch = append(batch, c)
		}
	}
	s.pending = append(s.pending[:0], s.pending[n:]...)
	s.mu.Unlock()
	s.insert(batch)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		s.writers--
		return false
	}
	return true
}

func (s *ReplayStore) insert(batch []*pendingClaim) {
	if len(batch) == 0 {
		return
	}
	docs := make([]any, len(batch))
	for i, c := range batch {
		docs[i] = c.doc
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	_, err := s.col.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	for i, c := range batch {
		c.done <- claimResult(err, i)
	}
}

// claimResult is the answer for the claim at index i of an insert that returned err.
func claimResult(err error, i int) error {
	if err == nil {
		return nil
	}
	var bulk mongo.BulkWriteException
	if !errors.As(err, &bulk) || bulk.WriteConcernError != nil {
		// Nothing says which claims were written durably: every claim of the batch fails
		// (a retry with the same identifier may then be refused as a replay, never accepted twice).
		return fmt.Errorf("claim request identifier: %w", err)
	}
	for _, we := range bulk.WriteErrors {
		if we.Index != i {
			continue
		}
		if mongo.IsDuplicateKeyError(we.WriteError) {
			return ErrReplay
		}
		return fmt.Errorf("claim request identifier: %w", we.WriteError)
	}
	return nil
}

// Sweep deletes identifiers whose window has passed, every interval until ctx ends. Their
// timestamps are outside the window by then, so a reuse is refused by the clock check.
func (s *ReplayStore) Sweep(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		res, err := s.col.DeleteMany(ctx, bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$lt", Value: time.Now()}}}})
		if err != nil {
			logger.Warn("sweep request identifiers", "error", err.Error())
			continue
		}
		logger.Debug("swept request identifiers", "deleted", res.DeletedCount)
	}
}
