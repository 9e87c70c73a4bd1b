package journal_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/journal"
)

// newEventsFixture is a journal that stages its postings' events, over wallets owned by
// companies (wallet id → company).
func newEventsFixture(t *testing.T, owners map[string]string) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: t.Context(), db: testdb.New(t), now: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}
	f.j = journal.New(journal.Config{DB: f.db, Policy: policy, Collections: []string{"wallets"}, EventEntity: "test_entry",
		Now: func() time.Time { return f.now }})
	if err := f.j.EnsureIndexes(f.ctx); err != nil {
		t.Fatal(err)
	}
	for w, company := range owners {
		if _, err := f.db.Collection("wallets").InsertOne(f.ctx, bson.D{{Key: "_id", Value: w}, {Key: "companyId", Value: company}}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// staged returns the events entry id's document holds for its relay.
func (f *fixture) staged(id string) []events.Event {
	f.t.Helper()
	var doc struct {
		Outbox  []bson.Raw `bson:"outbox"`
		Pending bool       `bson:"hasPending"`
	}
	if err := f.j.Outbox().FindOne(f.ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		f.t.Fatalf("read entry %s: %v", id, err)
	}
	if doc.Pending != (len(doc.Outbox) > 0) {
		f.t.Errorf("entry %s: hasPending %v with %d events staged", id, doc.Pending, len(doc.Outbox))
	}
	out := make([]events.Event, 0, len(doc.Outbox))
	for _, raw := range doc.Outbox {
		e, err := events.Decode(raw)
		if err != nil {
			f.t.Fatalf("entry %s: staged event: %v", id, err)
		}
		out = append(out, e)
	}
	return out
}

type postedEvent struct {
	EntryID      string `json:"entryId"`
	Type         string `json:"type"`
	Kind         string `json:"kind"`
	HoldID       string `json:"holdId"`
	PostingCount int    `json:"postingCount"`
	Postings     []struct {
		WalletID         string `json:"walletId"`
		Currency         string `json:"currency"`
		AvailableChange  string `json:"availableChange"`
		AvailableBalance string `json:"availableBalance"`
		PendingOutChange string `json:"pendingOutChange"`
	} `json:"postings"`
}

// TestAppliedEntryStagesOneEventPerCompany: an applied entry carries, for its relay, one
// journal.entry.posted event per company whose wallets it changed, each with that company's
// postings only; system and clearing accounts belong to nobody; a refused entry has none.
func TestAppliedEntryStagesOneEventPerCompany(t *testing.T) {
	t.Parallel()
	f := newEventsFixture(t, map[string]string{"W1": "ZA", "W2": "ZB", "W3": "ZA"})
	f.deposit("dep-1", "W1", "BTC", "10")
	if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "2.5")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Record(f.ctx, transfer("t-over", "W2", "W3", "BTC", "3")); !errors.Is(err, journal.ErrInsufficient) {
		t.Fatalf("overdraft: %v, want ErrInsufficient", err)
	}
	if _, err := f.j.Record(f.ctx, hold("h-1", "W1", "clr:S1", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Resolve(f.ctx, "h-1:void", "h-1", journal.Void, "test.void"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		entry string
		// want: company → "wallet:availableChange:availableBalance" of its postings.
		want map[string][]string
	}{
		{"dep-1", map[string][]string{"ZA": {"W1:10:10"}}},
		{"t-1", map[string][]string{"ZA": {"W1:-2.5:7.5"}, "ZB": {"W2:2.5:2.5"}}},
		{"t-over", nil},
		{"h-1", map[string][]string{"ZA": {"W1:-1:6.5"}}},
		{"h-1:void", map[string][]string{"ZA": {"W1:1:7.5"}}},
	}
	for _, tt := range tests {
		staged := f.staged(tt.entry)
		if len(staged) != len(tt.want) {
			t.Errorf("%s: %d events staged, want %d", tt.entry, len(staged), len(tt.want))
			continue
		}
		for _, e := range staged {
			want, ok := tt.want[e.CompanyID]
			if !ok {
				t.Errorf("%s: an event to %s, whose wallets it did not change", tt.entry, e.CompanyID)
				continue
			}
			if e.Type != journal.EventPosted || e.Entity.Type != "test_entry" || e.Entity.ID != journal.EventEntityID(tt.entry, e.CompanyID) || e.Entity.Version != 1 {
				t.Errorf("%s: event %s of %s %s version %d", tt.entry, e.Type, e.Entity.Type, e.Entity.ID, e.Entity.Version)
			}
			var d postedEvent
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatalf("%s: data %s: %v", tt.entry, e.Data, err)
			}
			var got []string
			for _, p := range d.Postings {
				got = append(got, p.WalletID+":"+p.AvailableChange+":"+p.AvailableBalance)
			}
			if d.EntryID != tt.entry || d.PostingCount != len(want) || len(got) != len(want) || (len(got) > 0 && got[0] != want[0]) {
				t.Errorf("%s to %s: entry %s, %d postings %v; want %v", tt.entry, e.CompanyID, d.EntryID, d.PostingCount, got, want)
			}
		}
	}
	f.reconciled()
}

// TestPostingEventsAreBounded: an entry touching many wallets of one company carries at most
// MaxEventPostings of them, and says how many there are.
func TestPostingEventsAreBounded(t *testing.T) {
	t.Parallel()
	owners := map[string]string{}
	e := journal.Entry{ID: "airdrop", Kind: journal.Single, Code: "test.airdrop", BusinessKey: "airdrop"}
	n := journal.MaxEventPostings + 8
	for i := range n {
		w := "W" + string(rune('A'+i/26)) + string(rune('a'+i%26))
		owners[w] = "ZA"
		e.Legs = append(e.Legs, journal.Leg{Holder: w, Currency: "ETH", Side: journal.Credit, Amount: amt("1")})
	}
	e.Legs = append(e.Legs, journal.Leg{Holder: "sys:external", Currency: "ETH", Side: journal.Debit, Amount: amt("40")})
	f := newEventsFixture(t, owners)
	if _, err := f.j.Record(f.ctx, e); err != nil {
		t.Fatal(err)
	}
	staged := f.staged("airdrop")
	if len(staged) != 1 {
		t.Fatalf("%d events staged, want 1 (one company)", len(staged))
	}
	var d postedEvent
	if err := json.Unmarshal(staged[0].Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.PostingCount != n || len(d.Postings) != journal.MaxEventPostings {
		t.Errorf("postingCount %d with %d postings; want %d with %d", d.PostingCount, len(d.Postings), n, journal.MaxEventPostings)
	}
	f.reconciled()
}
