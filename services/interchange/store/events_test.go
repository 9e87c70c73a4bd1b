package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/internal/outbox"
)

// The event tests look at what a consumer of the events would notice: the events each change
// stages, to whom, with what, numbered how, and what the relay hands to the log.

var eventsAt = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

const (
	owner = "ZVENUEOP" // the venue's operator, that instructs the settlements
	alpha = "ZALPHA"   // clients whose wallets the legs name
	beta  = "ZBETA"
	req1  = "0b6a9b8e-5d1c-4f3e-9a51-7c2d1e0f0001"
	req2  = "0b6a9b8e-5d1c-4f3e-9a51-7c2d1e0f0002"
)

type eventFixture struct {
	st  *store.Store
	db  *mongo.Database
	log events.Collection
}

func newEventFixture(t *testing.T) eventFixture {
	t.Helper()
	db := testdb.New(t)
	st := store.New(db, func() time.Time { return eventsAt })
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := mongodb.EnsureIndexes(context.Background(), db, events.LogIndexes("events")); err != nil {
		t.Fatal(err)
	}
	return eventFixture{st: st, db: db, log: events.NewCollection(db.Collection("events"))}
}

// outboxOf is the collection of Outboxes named name.
func (f eventFixture) outboxOf(t *testing.T, name string) *mongo.Collection {
	t.Helper()
	for _, c := range f.st.Outboxes() {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("Outboxes() lists no %s", name)
	return nil
}

// apiCall is the context of an API call with request-identifier id.
func apiCall(id string) context.Context {
	return logging.NewContext(context.Background(), logging.Request{ID: id, TraceID: strings.Repeat("a", 32), SpanID: strings.Repeat("b", 16), Flags: "01"})
}

// pending returns a document's event sequence, its events waiting for the relay and whether
// it is marked for the relay.
func pending(t *testing.T, coll *mongo.Collection, id string) (int64, []events.Event, bool) {
	t.Helper()
	var doc struct {
		EventSeq   int64      `bson:"eventSeq"`
		HasPending bool       `bson:"hasPending"`
		Outbox     []bson.Raw `bson:"outbox"`
	}
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := make([]events.Event, 0, len(doc.Outbox))
	for _, raw := range doc.Outbox {
		e, err := events.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return doc.EventSeq, out, doc.HasPending
}

func dataOf(t *testing.T, e events.Event) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(e.Data, &d); err != nil {
		t.Fatalf("event %s data %s: %v", e.Type, e.Data, err)
	}
	return d
}

// checkEvent checks the envelope of e.
func checkEvent(t *testing.T, e events.Event, typ, company string, entity events.Entity, request string) {
	t.Helper()
	if e.Type != typ || e.CompanyID != company || e.Entity != entity || e.RequestID != request || !e.Timestamp.Equal(eventsAt) ||
		e.SchemaVersion != events.SchemaVersion || !strings.HasPrefix(e.ID, "evt_") || len(e.Data) >= outbox.MaxDataBytes {
		t.Errorf("event %+v (data %s), want %s to %s about %+v, request %q", e, e.Data, typ, company, entity, request)
	}
}

// wantData checks the fields of data named in want (a field want maps to nil is absent).
func wantData(t *testing.T, what string, data map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := data[k]
		if v == nil {
			if ok {
				t.Errorf("%s: data has %s = %v, want none", what, k, got)
			}
			continue
		}
		if diff := cmp.Diff(v, got); diff != "" {
			t.Errorf("%s: data %s (-want +got):\n%s", what, k, diff)
		}
	}
}

// byEntity indexes events by entity id.
func byEntity(evs []events.Event) map[string]events.Event {
	out := map[string]events.Event{}
	for _, e := range evs {
		out[e.Entity.ID] = e
	}
	return out
}

func sum(currency, amount string) map[string]any {
	return map[string]any{"currency": currency, "ledger": currency, "amount": amount}
}

// instructed is a settlement of owner at BYBIT whose legs name two wallets of alpha and one
// of beta, with a net in ETH.
func instructed() settlement.Settlement {
	at := eventsAt.Add(-time.Hour)
	return settlement.Settlement{TrackingID: "STL-EVENTS0000000001", RequestID: "REQ-1", CompanyID: owner, VenueID: "BYBIT",
		InstructionCount: 3,
		Legs: []settlement.Leg{
			{WalletID: "ZALPHA-TW-AAAAAAAAAA", Currency: "BTC", Ledger: "BTC", Amount: "1.5", CompanyID: alpha},
			{WalletID: "ZALPHA-TW-BBBBBBBBBB", Currency: "ETH", Ledger: "ETH", Amount: "-20", CompanyID: alpha},
			{WalletID: "ZBETA-TW-CCCCCCCCCC", Currency: "ETH", Ledger: "ETH", Amount: "-7.25", CompanyID: beta},
		},
		Nets:     []settlement.Net{{Currency: "ETH", Ledger: "ETH", Amount: "-27.25"}},
		BodyHash: "hash", Status: settlement.StatusReceived, Version: 1, PayInAttempt: 1,
		History: []settlement.Step{{To: settlement.StatusReceived, At: at}}, CreatedAt: at, UpdatedAt: at}
}

// move claims s's transition to to and finishes it as out says.
func move(t *testing.T, ctx context.Context, st *store.Store, s settlement.Settlement, to string, out settlement.Outcome) settlement.Settlement {
	t.Helper()
	claimed, err := st.Claim(ctx, s, settlement.Pending{From: s.Status, To: to, Reason: out.Reason, LeaseUntil: eventsAt.Add(time.Minute), Token: ids.Random(16)})
	if err != nil {
		t.Fatal(err)
	}
	done, err := st.Finish(ctx, claimed, out)
	if err != nil {
		t.Fatal(err)
	}
	return done
}

// TestSettlementEvents: every status change of a settlement stages, in its own update, one
// event per company that sees the settlement, each with that company's view only; the
// versions of each company's entity follow each other without a gap; a change that loses its
// guard, or that leaves the status as it was, stages nothing; the relay hands them to the
// log, where each company's entity reads back in version order.
func TestSettlementEvents(t *testing.T) {
	t.Parallel()
	f := newEventFixture(t)
	coll := f.outboxOf(t, "settlements")
	s := instructed()
	key := owner + ":" + s.RequestID
	ownerID, alphaID, betaID := s.TrackingID, s.TrackingID+"@"+alpha, s.TrackingID+"@"+beta
	if got := store.SettlementEntityID(s, alpha); got != alphaID {
		t.Errorf("SettlementEntityID(alpha) = %s, want %s", got, alphaID)
	}

	stored, inserted, err := f.st.InsertSettlement(apiCall(req1), s)
	if err != nil || !inserted || stored.EventSeq != 1 {
		t.Fatalf("InsertSettlement = %+v, %v, %v; want it stored at event sequence 1", stored, inserted, err)
	}
	seq, box, marked := pending(t, coll, key)
	if seq != 1 || len(box) != 3 || !marked {
		t.Fatalf("after the insert: sequence %d, %d events, marked %v; want 1, one event per company (3), marked", seq, len(box), marked)
	}
	got := byEntity(box)
	checkEvent(t, got[ownerID], "settlement.received", owner, events.Entity{Type: "settlement", ID: ownerID, Version: 1}, req1)
	// The clients' events do not name the owner's request.
	checkEvent(t, got[alphaID], "settlement.received", alpha, events.Entity{Type: "settlement", ID: alphaID, Version: 1}, "")
	checkEvent(t, got[betaID], "settlement.received", beta, events.Entity{Type: "settlement", ID: betaID, Version: 1}, "")
	header := map[string]any{"settlementRequestId": "REQ-1", "settlementTrackingId": s.TrackingID, "status": settlement.StatusReceived,
		"previousStatus": nil, "venueId": "BYBIT", "companyId": owner, "errors": nil,
		"createdAt": "2026-11-26T08:00:00.000Z", "updatedAt": "2026-11-26T08:00:00.000Z"}
	wantData(t, "the owner's view", dataOf(t, got[ownerID]), header)
	wantData(t, "the owner's view", dataOf(t, got[ownerID]), map[string]any{"settlementCount": 3.0,
		"settlementTotals": []any{sum("BTC", "1.5"), sum("ETH", "-27.25")}, "netSettlements": []any{sum("ETH", "-27.25")}})
	wantData(t, "alpha's view", dataOf(t, got[alphaID]), header)
	wantData(t, "alpha's view", dataOf(t, got[alphaID]), map[string]any{"settlementCount": 2.0,
		"settlementTotals": []any{sum("BTC", "1.5"), sum("ETH", "-20")}, "netSettlements": []any{}})
	wantData(t, "beta's view", dataOf(t, got[betaID]), map[string]any{"settlementCount": 1.0,
		"settlementTotals": []any{sum("ETH", "-7.25")}, "netSettlements": []any{}})
	// Neither client's event says anything of the other's legs, or of any wallet.
	for id, other := range map[string][]string{alphaID: {beta, "7.25", "27.25", "TW-"}, betaID: {alpha, "1.5", "-20", "27.25", "TW-"}} {
		for _, private := range other {
			if strings.Contains(string(got[id].Data), private) {
				t.Errorf("the event of %s shows %q: %s", id, private, got[id].Data)
			}
		}
	}

	// The same request id again stores and stages nothing.
	if again, inserted, err := f.st.InsertSettlement(apiCall(req2), s); err != nil || inserted || again.EventSeq != 1 {
		t.Fatalf("InsertSettlement again = %+v, %v, %v; want the stored one, not inserted", again, inserted, err)
	}
	if seq, box, _ := pending(t, coll, key); seq != 1 || len(box) != 3 {
		t.Fatalf("after a repeated insert: sequence %d, %d events; want 1 and 3", seq, len(box))
	}

	s = move(t, apiCall(req2), f.st, stored, settlement.StatusInitiated, settlement.Outcome{Status: settlement.StatusInitiated, PayInAttempt: 1})
	if s.EventSeq != 2 {
		t.Errorf("after INITIATED: event sequence %d, want 2", s.EventSeq)
	}

	// A runner that lost its claim finishes nothing and stages nothing; the one that took the
	// transition over (the sweeper: no request) records it.
	pendingPayIn := settlement.Pending{From: s.Status, To: settlement.StatusPayIn, LeaseUntil: eventsAt, Token: "first"}
	first, err := f.st.Claim(apiCall(req1), s, pendingPayIn)
	if err != nil {
		t.Fatal(err)
	}
	pendingPayIn.Token = "second"
	second, err := f.st.Claim(context.Background(), first, pendingPayIn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Finish(apiCall(req1), first, settlement.Outcome{Status: settlement.StatusPayIn}); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("Finish by the runner that lost its claim: %v, want ErrConflict", err)
	}
	if seq, box, _ := pending(t, coll, key); seq != 2 || len(box) != 6 {
		t.Fatalf("after a lost finish: sequence %d, %d events; want 2 and 6", seq, len(box))
	}
	short := "insufficient funds in a payer's wallet"
	s, err = f.st.Finish(context.Background(), second, settlement.Outcome{Status: settlement.StatusAwaitingFunds, Reason: short, PayInAttempt: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Still short of funds: the status stays, no event.
	s = move(t, context.Background(), f.st, s, settlement.StatusPayIn, settlement.Outcome{Status: settlement.StatusAwaitingFunds, Reason: short, PayInAttempt: 3})
	if seq, box, _ := pending(t, coll, key); seq != 3 || len(box) != 9 || s.EventSeq != 3 {
		t.Fatalf("after a PAY_IN still short: sequence %d (read %d), %d events; want 3 and 9", seq, s.EventSeq, len(box))
	}
	s = move(t, apiCall(req2), f.st, s, settlement.StatusPayIn, settlement.Outcome{Status: settlement.StatusPayIn, PayInAttempt: 3, PayInHold: "h"})
	s = move(t, apiCall(req1), f.st, s, settlement.StatusFailed, settlement.Outcome{Status: settlement.StatusFailed, Reason: "holds released", PayInAttempt: 3, PayInHold: "h", ReverseAttempt: 1})
	_, box, _ = pending(t, coll, key)
	last := byEntity(box[len(box)-3:])
	checkEvent(t, last[betaID], "settlement.failed", beta, events.Entity{Type: "settlement", ID: betaID, Version: 5}, "")
	wantData(t, "beta's view of the failure", dataOf(t, last[betaID]), map[string]any{"status": settlement.StatusFailed,
		"previousStatus": settlement.StatusPayIn, "errors": map[string]any{"message": "holds released", "code": apperr.CodeConflict},
		"updatedAt": "2026-11-26T09:00:00.000Z", "settlementCount": 1.0})

	// The relay hands every event to the log; each company's entity reads back in order.
	relay := outbox.NewRelay(coll, f.log, nil)
	if n, err := relay.Once(context.Background()); err != nil || n != 15 {
		t.Fatalf("relay.Once = %d, %v; want 15 events", n, err)
	}
	if _, box, marked := pending(t, coll, key); len(box) != 0 || marked {
		t.Errorf("after the relay: %d events, marked %v; want none", len(box), marked)
	}
	wantTypes := "settlement.received settlement.initiated settlement.awaiting_funds settlement.pay_in settlement.failed"
	wantRequests := []string{req1, req2, "", req2, req1}
	for id, company := range map[string]string{ownerID: owner, alphaID: alpha, betaID: beta} {
		logged, err := f.log.Events(context.Background(), "settlement", id)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for i, e := range logged {
			types = append(types, e.Type)
			// Only the owner sees the ids of the requests that moved its settlement; its
			// clients' events name none.
			want := wantRequests[i]
			if company != owner {
				want = ""
			}
			if e.Entity.Version != int64(i+1) || e.CompanyID != company || e.RequestID != want {
				t.Errorf("%s event %d: %+v; want version %d to %s, request %q", id, i, e, i+1, company, want)
			}
		}
		if strings.Join(types, " ") != wantTypes {
			t.Errorf("%s: logged %v, want %s", id, types, wantTypes)
		}
	}
}

// TestSettlementEventsSummariseLegs: a settlement of hundreds of legs stages events whose
// data counts and sums the legs, far below the bound, one event per company.
func TestSettlementEventsSummariseLegs(t *testing.T) {
	t.Parallel()
	f := newEventFixture(t)
	s := instructed()
	s.Legs, s.Nets = nil, nil
	for i := range 800 {
		company := fmt.Sprintf("ZCLIENT%03d", i%200)
		s.Legs = append(s.Legs, settlement.Leg{WalletID: fmt.Sprintf("%s-TW-%010d", company, i), Currency: "BTC", Ledger: "BTC",
			Amount: "0.001", ExternalID: strings.Repeat("x", 64), CompanyID: company})
	}
	if _, inserted, err := f.st.InsertSettlement(context.Background(), s); err != nil || !inserted {
		t.Fatalf("InsertSettlement of 800 legs: %v, %v", inserted, err)
	}
	_, box, _ := pending(t, f.outboxOf(t, "settlements"), owner+":"+s.RequestID)
	if len(box) != 201 {
		t.Fatalf("%d events, want one to the owner and one to each of 200 clients", len(box))
	}
	for _, e := range box {
		if len(e.Data) > 1024 || e.RequestID != "" {
			t.Errorf("event %s to %s: %d bytes of data, request %q; want a summary, no request", e.Entity.ID, e.CompanyID, len(e.Data), e.RequestID)
		}
	}
	got := byEntity(box)
	wantData(t, "the owner's view", dataOf(t, got[s.TrackingID]), map[string]any{"settlementCount": 800.0, "settlementTotals": []any{sum("BTC", "0.8")}})
	wantData(t, "a client's view", dataOf(t, got[s.TrackingID+"@ZCLIENT007"]), map[string]any{"settlementCount": 4.0, "settlementTotals": []any{sum("BTC", "0.004")}})
}

func toCustody(id string) withdrawal.Withdrawal {
	at := eventsAt.Add(-time.Minute)
	return withdrawal.Withdrawal{TransferID: id, CompanyID: alpha, WalletID: "ZALPHA-TW-AAAAAAAAAA", VenueID: "BYBIT", Currency: "BTC",
		Amount: "0.5", DestinationWalletID: "ZALPHA-CW-0000000001", RequestID: "SERV-REQ-" + id, Status: withdrawal.StatusPending,
		Version: 1, CreatedAt: at, UpdatedAt: at, HoldAttempt: 1}
}

// TestWithdrawalEvents: a withdrawal's creation and its decision each stage one event to
// its client, numbered without a gap; a decision that loses its guard stages nothing; the
// relay hands them to the log in order.
func TestWithdrawalEvents(t *testing.T) {
	t.Parallel()
	f := newEventFixture(t)
	ctx := context.Background()
	coll := f.outboxOf(t, "withdrawals")
	w, err := f.st.InsertWithdrawal(apiCall(req1), toCustody("TR-1"))
	if err != nil || w.EventSeq != 1 {
		t.Fatalf("InsertWithdrawal = %+v, %v; want event sequence 1", w, err)
	}
	if again, err := f.st.InsertWithdrawal(apiCall(req2), toCustody("TR-1")); err != nil || again.EventSeq != 1 {
		t.Fatalf("InsertWithdrawal again = %+v, %v", again, err)
	}
	seq, box, marked := pending(t, coll, "TR-1")
	if seq != 1 || len(box) != 1 || !marked {
		t.Fatalf("after the insert: sequence %d, %d events, marked %v; want 1, 1, marked", seq, len(box), marked)
	}
	checkEvent(t, box[0], "withdrawal.pending_confirmation", alpha, events.Entity{Type: "withdrawal", ID: "TR-1", Version: 1}, req1)
	wantData(t, "the created withdrawal", dataOf(t, box[0]), map[string]any{"transferId": "TR-1", "companyId": alpha,
		"walletId": "ZALPHA-TW-AAAAAAAAAA", "venueId": "BYBIT", "currency": "BTC", "amount": "0.5",
		"destinationWalletId": "ZALPHA-CW-0000000001", "requestId": "SERV-REQ-TR-1", "status": withdrawal.StatusPending,
		"previousStatus": nil, "reason": nil, "decidedAt": nil, "completed": false, "createdAt": "2026-11-26T08:59:00.000Z"})

	// A refused hold moves the attempt on (no event); a decision from the version read before
	// it loses, and stages nothing.
	if err := f.st.NextHoldAttempt(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Decide(apiCall(req2), w, withdrawal.StatusAccepted, "", ""); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("a decision from a stale version: %v, want ErrConflict", err)
	}
	if seq, box, _ := pending(t, coll, "TR-1"); seq != 1 || len(box) != 1 {
		t.Fatalf("after a lost decision: sequence %d, %d events; want 1 and 1", seq, len(box))
	}
	if w, err = f.st.Withdrawal(ctx, alpha, "TR-1"); err != nil {
		t.Fatal(err)
	}
	if w, err = f.st.Decide(apiCall(req2), w, withdrawal.StatusAccepted, "", ""); err != nil || w.EventSeq != 2 {
		t.Fatalf("Decide = %+v, %v; want event sequence 2", w, err)
	}
	_, box, _ = pending(t, coll, "TR-1")
	checkEvent(t, box[1], "withdrawal.accepted", alpha, events.Entity{Type: "withdrawal", ID: "TR-1", Version: 2}, req2)
	wantData(t, "the accepted withdrawal", dataOf(t, box[1]), map[string]any{"status": withdrawal.StatusAccepted,
		"previousStatus": withdrawal.StatusPending, "decidedAt": "2026-11-26T09:00:00.000Z", "updatedAt": "2026-11-26T09:00:00.000Z", "completed": false})

	// The sweeper declines another: no request.
	other, err := f.st.InsertWithdrawal(ctx, toCustody("TR-2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Decide(ctx, other, withdrawal.StatusDeclined, withdrawal.ExpiryReason, ""); err != nil {
		t.Fatal(err)
	}
	_, box, _ = pending(t, coll, "TR-2")
	if len(box) != 2 {
		t.Fatalf("TR-2: %d events, want 2", len(box))
	}
	checkEvent(t, box[1], "withdrawal.declined", alpha, events.Entity{Type: "withdrawal", ID: "TR-2", Version: 2}, "")
	wantData(t, "the declined withdrawal", dataOf(t, box[1]), map[string]any{"reason": withdrawal.ExpiryReason})

	// Demo data put decided has its one event.
	put := toCustody("TR-3")
	put.Status, put.DecidedAt = withdrawal.StatusAccepted, eventsAt
	if err := store.PutWithdrawal(ctx, f.db, put); err != nil {
		t.Fatal(err)
	}
	seq, box, _ = pending(t, coll, "TR-3")
	if seq != 1 || len(box) != 1 || box[0].Type != "withdrawal.accepted" || dataOf(t, box[0])["completed"] != true {
		t.Fatalf("a withdrawal put accepted: sequence %d, events %+v; want withdrawal.accepted, completed", seq, box)
	}

	relay := outbox.NewRelay(coll, f.log, nil)
	if n, err := relay.Once(ctx); err != nil || n != 5 {
		t.Fatalf("relay.Once = %d, %v; want 5 events", n, err)
	}
	logged, err := f.log.Events(ctx, "withdrawal", "TR-1")
	if err != nil || len(logged) != 2 || logged[0].Type != "withdrawal.pending_confirmation" || logged[0].Entity.Version != 1 ||
		logged[1].Type != "withdrawal.accepted" || logged[1].Entity.Version != 2 || logged[1].RequestID != req2 {
		t.Fatalf("the log of TR-1: %+v, %v; want pending_confirmation then accepted", logged, err)
	}
}
