package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ErrReplay is returned when a request identifier was already used by the company.
var ErrReplay = errors.New("request identifier already used")

// ReplayStore remembers request identifiers per company in the gateway's own collection,
// shared by every gateway replica: a unique _id makes the second use fail on any replica.
type ReplayStore struct {
	col *mongo.Collection
}

// NewReplayStore returns the store on db.
func NewReplayStore(db *mongo.Database) *ReplayStore {
	return &ReplayStore{col: db.Collection("request_ids")}
}

// EnsureIndexes creates the index the sweeper uses.
func (s *ReplayStore) EnsureIndexes(ctx context.Context) error {
	model := mongo.IndexModel{Keys: bson.D{{Key: "expiresAt", Value: 1}}, Options: options.Index().SetName("expires")}
	if _, err := s.col.Indexes().CreateOne(ctx, model); err != nil {
		return fmt.Errorf("create index request_ids.expires: %w", err)
	}
	return nil
}

// Claim records the identifier; ErrReplay if it was seen before.
func (s *ReplayStore) Claim(ctx context.Context, company, requestID string, expires time.Time) error {
	_, err := s.col.InsertOne(ctx, bson.D{{Key: "_id", Value: company + ":" + requestID}, {Key: "expiresAt", Value: expires}})
	if mongo.IsDuplicateKeyError(err) {
		return ErrReplay
	}
	if err != nil {
		return fmt.Errorf("claim request identifier: %w", err)
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
