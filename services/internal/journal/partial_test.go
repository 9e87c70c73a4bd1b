package journal_test

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/services/internal/journal"
)

// posted names the amount posted on one account of a hold.
func posted(holder, cur string, side journal.Side, a string) journal.Leg {
	return journal.Leg{Holder: holder, Currency: cur, Side: side, Amount: amt(a)}
}

// storedFingerprint reads the fingerprint the journal stored for entry id.
func (f *fixture) storedFingerprint(id string) string {
	f.t.Helper()
	var d struct {
		FP string `bson:"fp"`
	}
	if err := f.db.Collection("journal_entries").FindOne(f.ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		f.t.Fatalf("read entry %s: %v", id, err)
	}
	return d.FP
}

// A hold posted for less than it holds releases the rest in the same entry (TigerBeetle's
// partial post): pending −held, posted +amount, on both sides.
func TestPartialPost(t *testing.T) {
	t.Parallel()
	const D, C = journal.Debit, journal.Credit
	tests := []struct {
		name string
		// posted nil is a full post (Resolve).
		posted []journal.Leg
		// W1 and the world account after it: available/ledger/pendingOut/pendingIn.
		wantW1, wantOut string
		// wantFull: the entry is the full post's (same fingerprint as Resolve's).
		wantFull bool
	}{
		{name: "full post unchanged", wantW1: "4/4/0/0", wantOut: "1/1/0/0", wantFull: true},
		{name: "partial post", posted: []journal.Leg{posted("W1", "BTC", D, "0.9"), posted("sys:out", "BTC", C, "0.9")},
			wantW1: "4.1/4.1/0/0", wantOut: "0.9/0.9/0/0"},
		{name: "zero remainder is the full post", posted: []journal.Leg{posted("sys:out", "BTC", C, "1"), posted("W1", "BTC", D, "1")},
			wantW1: "4/4/0/0", wantOut: "1/1/0/0", wantFull: true},
		{name: "smallest post", posted: []journal.Leg{posted("W1", "BTC", D, "0.00000001"), posted("sys:out", "BTC", C, "0.00000001")},
			wantW1: "4.99999999/4.99999999/0/0", wantOut: "0.00000001/0.00000001/0/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "W1")
			f.deposit("dep-1", "W1", "BTC", "5")
			h := hold("wd-1:hold", "W1", "sys:out", "BTC", "1")
			if _, err := f.j.Record(f.ctx, h); err != nil {
				t.Fatal(err)
			}
			if got, want := f.balance("W1", "BTC"), "4/5/1/0"; got != want {
				t.Fatalf("W1 held = %s, want %s", got, want)
			}
			post := func() (journal.Result, error) {
				if tt.posted == nil {
					return f.j.Resolve(f.ctx, "wd-1:post", "wd-1:hold", journal.Post, "test.post")
				}
				return f.j.ResolvePartial(f.ctx, "wd-1:post", "wd-1:hold", tt.posted, "test.post")
			}
			if res, err := post(); err != nil || res.Replayed {
				t.Fatalf("post = %+v, %v", res, err)
			}
			if res, err := post(); err != nil || !res.Replayed {
				t.Fatalf("retry with the same amounts = %+v, %v; want a replay", res, err)
			}
			if got := f.balance("W1", "BTC"); got != tt.wantW1 {
				t.Errorf("W1 = %s, want %s", got, tt.wantW1)
			}
			if got := f.balance("sys:out", "BTC"); got != tt.wantOut {
				t.Errorf("sys:out = %s, want %s", got, tt.wantOut)
			}
			full := journal.Entry{ID: "wd-1:post", Kind: journal.Post, HoldRef: "wd-1:hold", Legs: h.Legs, Code: "test.post", BusinessKey: h.BusinessKey}
			if got := f.storedFingerprint("wd-1:post") == journal.Fingerprint(full); got != tt.wantFull {
				t.Errorf("stored entry is the full post's: %v, want %v", got, tt.wantFull)
			}
			if st, by, err := f.j.HoldState(f.ctx, "wd-1:hold"); err != nil || st != "post" || by != "wd-1:post" {
				t.Errorf("hold state = %s by %s, %v; want post by wd-1:post", st, by, err)
			}
			f.reconciled()
		})
	}
}

// The post entry's legs record what each releases from pending and what it posts; the
// statement shows both in the same posting.
func TestPartialPostStatement(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1")
	f.deposit("dep-1", "W1", "ETH", "2")
	if _, err := f.j.Record(f.ctx, hold("wd-2:hold", "W1", "sys:out", "ETH", "1.5")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.ResolvePartial(f.ctx, "wd-2:post", "wd-2:hold",
		[]journal.Leg{posted("W1", "ETH", journal.Debit, "1.2"), posted("sys:out", "ETH", journal.Credit, "1.2")}, "test.post"); err != nil {
		t.Fatal(err)
	}
	hist, err := f.j.History(f.ctx, journal.HistoryQuery{Holder: "W1", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	last := hist[len(hist)-1]
	if last.Entry != "wd-2:post" {
		t.Fatalf("last posting of W1 = %+v, want the post", last)
	}
	d := last.Delta
	if d.DebitsPending.String() != "-1.5" || d.DebitsPosted.String() != "1.2" || d.Available().String() != "0.3" || d.Ledger().String() != "-1.2" {
		t.Errorf("the post's change on W1 = %s; want pending −1.5, posted +1.2 (available +0.3, ledger −1.2)", d)
	}
	if got, want := f.balance("W1", "ETH"), "0.8/0.8/0/0"; got != want {
		t.Errorf("W1 = %s, want %s", got, want)
	}
	f.reconciled()
}

// A hold over several accounts: each account posts its own part, filled leg by leg.
func TestPartialPostOfASettlement(t *testing.T) {
	t.Parallel()
	const D, C = journal.Debit, journal.Credit
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "BTC", "3")
	f.deposit("dep-2", "W2", "BTC", "3")
	payIn := journal.Entry{ID: "stl:S1:payin", Kind: journal.Pending, Code: "test.payin", BusinessKey: "S1", Legs: []journal.Leg{
		{Holder: "W1", Currency: "BTC", Side: D, Amount: amt("1")},
		{Holder: "W1", Currency: "BTC", Side: D, Amount: amt("1")},
		{Holder: "W2", Currency: "BTC", Side: D, Amount: amt("2")},
		{Holder: "clr:S1", Currency: "BTC", Side: C, Amount: amt("4")},
	}}
	if _, err := f.j.Record(f.ctx, payIn); err != nil {
		t.Fatal(err)
	}
	// W1 posts 1.5 of its 2 (its first leg in full, 0.5 of its second), W2 nothing.
	if _, err := f.j.ResolvePartial(f.ctx, "stl:S1:post", "stl:S1:payin",
		[]journal.Leg{posted("clr:S1", "BTC", C, "1.5"), posted("W1", "BTC", D, "1.5")}, "test.post"); err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]string{"W1": "1.5/1.5/0/0", "W2": "3/3/0/0", "clr:S1": "1.5/1.5/0/0"} {
		if got := f.balance(h, "BTC"); got != want {
			t.Errorf("%s = %s, want %s", h, got, want)
		}
	}
	f.reconciled()
}

// Refusals of a partial post record nothing and leave the hold open, except a retry under
// the id of a post already made with other amounts, which is ErrEntryExists naming the leg.
func TestPartialPostRefusals(t *testing.T) {
	t.Parallel()
	const D, C = journal.Debit, journal.Credit
	f := newFixture(t, "W1")
	f.deposit("dep-1", "W1", "BTC", "5")
	if _, err := f.j.Record(f.ctx, hold("wd-3:hold", "W1", "sys:out", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		posted []journal.Leg
		want   error
	}{
		{"over the hold", []journal.Leg{posted("W1", "BTC", D, "1.00000001"), posted("sys:out", "BTC", C, "1.00000001")}, journal.ErrPostExceedsHold},
		{"over the hold on one side", []journal.Leg{posted("W1", "BTC", D, "0.5"), posted("sys:out", "BTC", C, "1.5")}, journal.ErrPostExceedsHold},
		{"unbalanced", []journal.Leg{posted("W1", "BTC", D, "0.5"), posted("sys:out", "BTC", C, "0.4")}, journal.ErrUnbalanced},
		{"one side only", []journal.Leg{posted("W1", "BTC", D, "0.5")}, journal.ErrUnbalanced},
		{"nothing posted", []journal.Leg{posted("W1", "BTC", D, "0"), posted("sys:out", "BTC", C, "0")}, journal.ErrInvalidEntry},
		{"no amounts", nil, journal.ErrInvalidEntry},
		{"an account outside the hold", []journal.Leg{posted("W2", "BTC", D, "0.5"), posted("sys:out", "BTC", C, "0.5")}, journal.ErrInvalidEntry},
		{"the wrong side", []journal.Leg{posted("W1", "BTC", C, "0.5"), posted("sys:out", "BTC", D, "0.5")}, journal.ErrInvalidEntry},
		{"an account twice", []journal.Leg{posted("W1", "BTC", D, "0.5"), posted("W1", "BTC", D, "0.5"), posted("sys:out", "BTC", C, "1")}, journal.ErrInvalidEntry},
		{"negative", []journal.Leg{posted("W1", "BTC", D, "-0.5"), posted("sys:out", "BTC", C, "-0.5")}, journal.ErrInvalidEntry},
	}
	for _, tt := range tests {
		if _, err := f.j.ResolvePartial(f.ctx, "wd-3:post", "wd-3:hold", tt.posted, "test.post"); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if st, _, err := f.j.HoldState(f.ctx, "wd-3:hold"); err != nil || st != "open" {
		t.Fatalf("hold after the refusals = %q, %v; want open", st, err)
	}
	if got, want := f.balance("W1", "BTC"), "4/5/1/0"; got != want {
		t.Fatalf("W1 after the refusals = %s, want %s (still held)", got, want)
	}

	good := []journal.Leg{posted("W1", "BTC", D, "0.75"), posted("sys:out", "BTC", C, "0.75")}
	if _, err := f.j.ResolvePartial(f.ctx, "wd-3:post", "wd-3:hold", good, "test.post"); err != nil {
		t.Fatalf("the post once right: %v", err)
	}
	var exists *journal.ExistsError
	other := []journal.Leg{posted("W1", "BTC", D, "0.8"), posted("sys:out", "BTC", C, "0.8")}
	if _, err := f.j.ResolvePartial(f.ctx, "wd-3:post", "wd-3:hold", other, "test.post"); !errors.As(err, &exists) || exists.Field != "legs[0].amount" {
		t.Errorf("retry with other amounts: %v; want ExistsError naming legs[0].amount", err)
	}
	if _, err := f.j.Resolve(f.ctx, "wd-3:post", "wd-3:hold", journal.Post, "test.post"); !errors.As(err, &exists) || exists.Field != "legs[0].amount" {
		t.Errorf("retry as a full post: %v; want ExistsError naming legs[0].amount", err)
	}
	if _, err := f.j.ResolvePartial(f.ctx, "wd-3:post2", "wd-3:hold", good, "test.post"); !errors.Is(err, journal.ErrHoldAlreadyPosted) {
		t.Errorf("a second post of the hold: %v, want ErrHoldAlreadyPosted", err)
	}
	if _, err := f.j.Resolve(f.ctx, "wd-3:void", "wd-3:hold", journal.Void, "test.void"); !errors.Is(err, journal.ErrHoldAlreadyPosted) {
		t.Errorf("a void after the partial post: %v, want ErrHoldAlreadyPosted", err)
	}
	if got, want := f.balance("W1", "BTC"), "4.25/4.25/0/0"; got != want {
		t.Errorf("W1 = %s, want %s", got, want)
	}
	f.reconciled()
}
