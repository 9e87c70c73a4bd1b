package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
)

// TestLostUpdateStagesNothing: a change whose conditional update loses to a rival's (the
// rival changes the activation between the read and the update) stages nothing; it reads
// again and either finds its state already there, or lands with the next version.
func TestLostUpdateStagesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		rival     []bool // the rival's changes, between the loser's read and update
		wantTypes []string
		wantBy    []string
	}{
		{"the rival made the same change", []bool{true},
			[]string{"vasp.deactivated", "vasp.activated"}, []string{"first", "rival"}},
		{"the rival changed it and back", []bool{true, false},
			[]string{"vasp.deactivated", "vasp.activated", "vasp.deactivated", "vasp.activated"}, []string{"first", "rival", "rival", "loser"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := testdb.New(t)
			s, rival := New(db), New(db)
			ctx := context.Background()
			if err := s.EnsureIndexes(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetActivation(ctx, "ZT", "V1", false, "first"); err != nil {
				t.Fatal(err)
			}
			raced := false
			s.now = func() time.Time {
				if !raced {
					raced = true
					for _, active := range tt.rival {
						if _, err := rival.SetActivation(ctx, "ZT", "V1", active, "rival"); err != nil {
							t.Error(err)
						}
					}
				}
				return time.Now()
			}
			if _, err := s.SetActivation(ctx, "ZT", "V1", true, "loser"); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				EventSeq int64      `bson:"eventSeq"`
				Version  int64      `bson:"version"`
				Outbox   []bson.Raw `bson:"outbox"`
			}
			if err := db.Collection(colActivations).FindOne(ctx, bson.D{{Key: "_id", Value: "ZT:V1"}}).Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Outbox) != len(tt.wantTypes) || doc.EventSeq != int64(len(tt.wantTypes)) || doc.Version != doc.EventSeq {
				t.Fatalf("%d events, eventSeq %d, version %d; want %d of each", len(doc.Outbox), doc.EventSeq, doc.Version, len(tt.wantTypes))
			}
			for i, raw := range doc.Outbox {
				e, err := events.Decode(raw)
				if err != nil {
					t.Fatal(err)
				}
				var data struct {
					UpdatedBy string `json:"updatedBy"`
				}
				if err := json.Unmarshal(e.Data, &data); err != nil {
					t.Fatal(err)
				}
				if e.Type != tt.wantTypes[i] || e.Entity.Version != int64(i+1) || data.UpdatedBy != tt.wantBy[i] {
					t.Errorf("event %d: %s version %d by %s; want %s version %d by %s", i+1, e.Type, e.Entity.Version, data.UpdatedBy,
						tt.wantTypes[i], i+1, tt.wantBy[i])
				}
			}
		})
	}
}
