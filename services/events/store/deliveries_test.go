package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/apperr"
	pevents "github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/platform/webhook"
	"github.com/zcustody/suite/services/events"
	"github.com/zcustody/suite/services/events/store"
)

// subscribe stores an approved subscription of company starting at its log's head.
func subscribe(t *testing.T, st *store.Store, company string, now time.Time) events.Subscription {
	t.Helper()
	keys, err := webhook.NewKeyring("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := events.NewSubscription(company, "https://example.com/hook", nil, "maker", now, keys)
	if err != nil {
		t.Fatal(err)
	}
	head, err := st.Head(context.Background(), company)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(true, "checker", now, head.Next-1, s.Pending.ProposedAt); err != nil {
		t.Fatal(err)
	}
	if err := st.InsertSubscription(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// attempt claims delivery id as owner at now and records an attempt with outcome.
func attempt(t *testing.T, st *store.Store, id string, now time.Time, outcome string) {
	t.Helper()
	ctx := context.Background()
	d, ok, err := st.Claim(ctx, id, "owner", now, time.Minute)
	if err != nil || !ok {
		t.Fatalf("Claim(%s) = %v, %v", id, ok, err)
	}
	d.Attempts++
	d.LastAt, d.LastOutcome, d.UpdatedAt = now, outcome, now
	d.Status = events.DeliveryDelivered
	if outcome != webhook.OutcomeDelivered {
		d.Status, d.LastFailedAt = events.DeliveryFailed, now
	}
	if ok, err := st.FinishAttempt(ctx, "owner", d, events.Attempt{Number: d.Attempts, Trigger: events.TriggerScheduled, At: now, Outcome: outcome}); err != nil || !ok {
		t.Fatalf("FinishAttempt = %v, %v", ok, err)
	}
}

// TestDeliveriesAreIdempotentAndLeased: a delivery is made once per (subscription, event),
// only of the subscription's company, and one claim holds it until its lease lapses.
func TestDeliveriesAreIdempotentAndLeased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClock()
	st := newStore(t, testdb.New(t), "one", time.Minute, c.now)
	sub := subscribe(t, st, "ZA", c.now())
	if _, err := st.Append(ctx, []pevents.Event{event("ZA", "S-1", 1), event("ZB", "S-9", 1)}); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	logged := all(t, st, "ZA")
	for range 2 {
		if _, err := st.CreateDeliveries(ctx, sub, logged, c.now()); err != nil {
			t.Fatal(err)
		}
	}
	due, err := st.DueDeliveries(ctx, []string{sub.ID}, c.now(), 10)
	if err != nil || len(due) != 1 || due[0].ID != events.DeliveryID(sub.ID, logged[0].ID) || due[0].Seq != 1 {
		t.Fatalf("DueDeliveries = %+v, %v; want the one delivery", due, err)
	}
	if zb := all(t, st, "ZB"); len(zb) != 1 {
		t.Fatalf("ZB's log: %+v", zb)
	} else if _, err := st.CreateDeliveries(ctx, sub, zb, c.now()); err == nil {
		t.Error("ZB's event was made a delivery of ZA's subscription")
	}
	if _, ok, err := st.Claim(ctx, due[0].ID, "one", c.now(), time.Minute); err != nil || !ok {
		t.Fatalf("first claim = %v, %v", ok, err)
	}
	if _, ok, err := st.Claim(ctx, due[0].ID, "two", c.now(), time.Minute); err != nil || ok {
		t.Fatalf("second claim while leased = %v, %v; want refused", ok, err)
	}
	c.add(30 * time.Second)
	if ok, err := st.RenewLease(ctx, due[0].ID, "one", c.now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("RenewLease = %v, %v", ok, err)
	}
	c.add(45 * time.Second) // past the first lease, within the renewed one
	if _, ok, _ := st.Claim(ctx, due[0].ID, "two", c.now(), time.Minute); ok {
		t.Fatal("a renewed lease was taken")
	}
	c.add(time.Minute)
	if _, ok, err := st.Claim(ctx, due[0].ID, "two", c.now(), time.Minute); err != nil || !ok {
		t.Fatalf("claim after the lease lapsed = %v, %v", ok, err)
	}
	if ok, _ := st.RenewLease(ctx, due[0].ID, "one", c.now().Add(time.Minute)); ok {
		t.Error("the lapsed owner renewed a lease another took")
	}
}

// TestListAttemptsPagesNewestFirst: the history is the company's only, newest first, filtered
// and paged; retention deletes old attempts and finished deliveries.
func TestListAttemptsPagesNewestFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClock()
	st := newStore(t, testdb.New(t), "one", time.Minute, c.now)
	sub := subscribe(t, st, "ZA", c.now())
	var evs []pevents.Event
	for v := int64(1); v <= 5; v++ {
		evs = append(evs, event("ZA", "S-1", v))
	}
	if _, err := st.Append(ctx, evs); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	logged := all(t, st, "ZA")
	if _, err := st.CreateDeliveries(ctx, sub, logged, c.now()); err != nil {
		t.Fatal(err)
	}
	start := c.now()
	for i, l := range logged {
		outcome := webhook.OutcomeDelivered
		if i%2 == 1 {
			outcome = webhook.OutcomeTimedOut
		}
		attempt(t, st, events.DeliveryID(sub.ID, l.ID), c.now(), outcome)
		c.add(time.Minute)
	}
	if _, _, err := st.ListAttempts(ctx, store.AttemptQuery{}); err == nil {
		t.Error("ListAttempts without a company succeeded")
	}
	var seen []string
	after := ""
	for page := 0; ; page++ {
		got, more, err := st.ListAttempts(ctx, store.AttemptQuery{CompanyID: "ZA", After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range got {
			seen = append(seen, a.EventID)
		}
		if !more {
			break
		}
		after = got[len(got)-1].ID
	}
	if len(seen) != 5 || seen[0] != logged[4].ID || seen[4] != logged[0].ID {
		t.Errorf("pages gave %v, want the 5 attempts newest first", seen)
	}
	if got, _, _ := st.ListAttempts(ctx, store.AttemptQuery{CompanyID: "ZA", Outcome: webhook.OutcomeTimedOut}); len(got) != 2 {
		t.Errorf("TIMED_OUT attempts: %d, want 2", len(got))
	}
	if got, _, _ := st.ListAttempts(ctx, store.AttemptQuery{CompanyID: "ZA", Since: start.Add(time.Minute), Until: start.Add(3 * time.Minute)}); len(got) != 2 {
		t.Errorf("attempts in [1 min, 3 min): %d, want 2", len(got))
	}
	if got, _, _ := st.ListAttempts(ctx, store.AttemptQuery{CompanyID: "ZA", SubscriptionID: sub.ID, EventID: logged[2].ID}); len(got) != 1 {
		t.Errorf("attempts of one event: %d, want 1", len(got))
	}
	if got, _, _ := st.ListAttempts(ctx, store.AttemptQuery{CompanyID: "ZB"}); len(got) != 0 {
		t.Errorf("ZB sees %d of ZA's attempts", len(got))
	}
	n, err := st.PruneDeliveries(ctx, start.Add(2*time.Minute+time.Second))
	if err != nil || n != 6 { // 3 attempts, 3 finished deliveries (updated at 0, 1 and 2 min)
		t.Errorf("PruneDeliveries = %d, %v; want 6", n, err)
	}
	if got, _, _ := st.ListAttempts(ctx, store.AttemptQuery{CompanyID: "ZA"}); len(got) != 2 {
		t.Errorf("%d attempts left, want 2", len(got))
	}
	if _, err := st.Delivery(ctx, events.DeliveryID(sub.ID, logged[0].ID)); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("an old finished delivery is still kept: %v", err)
	}
}

// TestSuspendStagesTheEvent: a suspension counts the subscription's event, appends it to the
// company's inbox, and happens once.
func TestSuspendStagesTheEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClock()
	st := newStore(t, testdb.New(t), "one", time.Minute, c.now)
	sub := subscribe(t, st, "ZA", c.now())
	if ok, err := st.Suspend(ctx, sub.ID, "gone", c.now()); err != nil || !ok {
		t.Fatalf("Suspend = %v, %v", ok, err)
	}
	if ok, err := st.Suspend(ctx, sub.ID, "gone", c.now()); err != nil || ok {
		t.Fatalf("second Suspend = %v, %v; want false", ok, err)
	}
	if n, err := st.RelayStaged(ctx); err != nil || n != 0 {
		t.Errorf("RelayStaged = %d, %v; want nothing left staged", n, err)
	}
	sequence(t, st)
	logged := all(t, st, "ZA")
	if len(logged) != 1 || logged[0].Type != events.SuspendedEventType || logged[0].Entity.ID != sub.ID || logged[0].Entity.Version != 1 {
		t.Fatalf("log = %+v, want the one suspension event", logged)
	}
	got, err := st.Subscription(ctx, "ZA", sub.ID)
	if err != nil || got.Status != events.StatusSuspended || got.SuspendedReason != "gone" || got.EventSeq != 1 {
		t.Errorf("subscription = %+v, %v", got, err)
	}
}

// TestSuspensionNeverOverwritesAnUnsentOne: a suspension whose event is still staged (its
// append failed, and the subscription was enabled and failed again before the next relay
// pass) is appended before the new one is staged: the log gets both, versions without a gap.
func TestSuspensionNeverOverwritesAnUnsentOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClock()
	db := testdb.New(t)
	st := newStore(t, db, "one", time.Minute, c.now)
	sub := subscribe(t, st, "ZA", c.now())
	// A suspension (version 1) whose append never happened: as Suspend leaves it when the
	// events intake fails, the subscription enabled again since.
	unsent := pevents.Event{ID: "evt_unsent-suspension", Type: events.SuspendedEventType, Timestamp: c.now().UTC().Truncate(time.Millisecond),
		CompanyID: "ZA", Entity: pevents.Entity{Type: events.SubscriptionEntity, ID: sub.ID, Version: 1},
		Data: []byte(`{"subscriptionId":"` + sub.ID + `","reason":"gone","suspendedAt":"2026-11-26T09:00:00.000Z"}`), SchemaVersion: pevents.SchemaVersion}
	raw, err := bson.Marshal(unsent.Document())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("subscriptions").UpdateOne(ctx, bson.D{{Key: "_id", Value: sub.ID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "eventSeq", Value: 1}, {Key: "staged", Value: bson.D{{Key: "id", Value: unsent.ID},
			{Key: "at", Value: c.now().UTC()}, {Key: "event", Value: bson.Raw(raw)}}}}}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Suspend(ctx, sub.ID, "no answer", c.now()); err != nil || !ok {
		t.Fatalf("Suspend = %v, %v", ok, err)
	}
	sequence(t, st)
	var versions []int64
	for _, l := range all(t, st, "ZA") {
		versions = append(versions, l.Entity.Version)
	}
	if len(versions) != 2 || versions[0] != 1 || versions[1] != 2 {
		t.Fatalf("suspension events in the log: versions %v, want 1 and 2", versions)
	}
}

// TestDeliveringSubscriptionsAreAllRead: the dispatcher's list of delivering subscriptions
// leaves none out, however many there are (it is read in pages).
func TestDeliveringSubscriptionsAreAllRead(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := newStore(t, db, "one", time.Minute, newClock().now)
	const n = 1001
	docs := make([]any, 0, n+1)
	for i := range n {
		docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprintf("sub_%05d", i)}, {Key: "companyId", Value: fmt.Sprintf("Z%04d", i/20)},
			{Key: "status", Value: events.StatusActive}, {Key: "enabled", Value: true}})
	}
	docs = append(docs, bson.D{{Key: "_id", Value: "sub_off"}, {Key: "companyId", Value: "Z0000"}, {Key: "status", Value: events.StatusActive}, {Key: "enabled", Value: false}})
	if _, err := db.Collection("subscriptions").InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	subs, err := st.DeliveringSubscriptions(context.Background())
	if err != nil || len(subs) != n || subs[0].ID != "sub_00000" || subs[n-1].ID != fmt.Sprintf("sub_%05d", n-1) {
		t.Fatalf("%d delivering subscriptions, %v; want all %d in id order, the switched-off one left out", len(subs), err, n)
	}
}

// TestDeleteSubscriptionDropsItsWaitingDeliveriesInPages: deleting a subscription with a
// backlog of more than two pages drops every waiting delivery of it (pending or failed),
// keeps the delivered ones (history until retention) and another subscription's, and then
// the subscription.
func TestDeleteSubscriptionDropsItsWaitingDeliveriesInPages(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	c := newClock()
	st := newStore(t, db, "one", time.Minute, c.now)
	sub, other := subscribe(t, st, "ZA", c.now()), subscribe(t, st, "ZA", c.now())
	const n = 2100
	docs := make([]any, 0, n+2)
	for i := range n {
		status := events.DeliveryPending
		if i%3 == 0 {
			status = events.DeliveryFailed
		}
		docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprintf("%s:evt_%05d", sub.ID, i)}, {Key: "subscriptionId", Value: sub.ID},
			{Key: "companyId", Value: "ZA"}, {Key: "status", Value: status}})
	}
	docs = append(docs,
		bson.D{{Key: "_id", Value: sub.ID + ":evt_done"}, {Key: "subscriptionId", Value: sub.ID}, {Key: "companyId", Value: "ZA"},
			{Key: "status", Value: events.DeliveryDelivered}},
		bson.D{{Key: "_id", Value: other.ID + ":evt_00000"}, {Key: "subscriptionId", Value: other.ID}, {Key: "companyId", Value: "ZA"},
			{Key: "status", Value: events.DeliveryPending}})
	if _, err := db.Collection("deliveries").InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	gone, err := st.DeleteSubscription(context.Background(), "ZA", sub.ID)
	if err != nil || gone != n {
		t.Fatalf("DeleteSubscription = %d, %v; want its %d waiting deliveries dropped", gone, err, n)
	}
	cur, err := db.Collection("deliveries").Find(context.Background(),
		bson.D{{Key: "subscriptionId", Value: bson.D{{Key: "$in", Value: bson.A{sub.ID, other.ID}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	if want := []string{other.ID + ":evt_00000", sub.ID + ":evt_done"}; !slices.Equal(ids, slices.Sorted(slices.Values(want))) {
		t.Errorf("deliveries left %v, want %v", ids, want)
	}
	if _, err := st.Subscription(context.Background(), "ZA", sub.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("the subscription after its deletion: %v, want not found", err)
	}
}

// TestADeletionCutShortIsHiddenAndFinished: a subscription whose deletion began (switched
// off and marked) is gone for its company and for the dispatcher, a fan-out that read it
// before can no longer move its cursor and drops what it made, and the sweep finishes the
// deletion with its deliveries.
func TestADeletionCutShortIsHiddenAndFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	c := newClock()
	st := newStore(t, db, "one", time.Minute, c.now)
	sub := subscribe(t, st, "ZA", c.now())
	kept := subscribe(t, st, "ZA", c.now())
	if _, err := st.Append(ctx, []pevents.Event{event("ZA", "S-1", 1), event("ZA", "S-2", 1)}); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	logged := all(t, st, "ZA")
	for _, s := range []events.Subscription{sub, kept} {
		if _, err := st.CreateDeliveries(ctx, s, logged, c.now()); err != nil {
			t.Fatal(err)
		}
	}
	// The deletion's first step, then the call cut short.
	if _, err := db.Collection("subscriptions").UpdateOne(ctx, bson.D{{Key: "_id", Value: sub.ID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "enabled", Value: false}, {Key: "deleting", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Subscription(ctx, "ZA", sub.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("the company reads a subscription being deleted: %v", err)
	}
	if list, err := st.Subscriptions(ctx, "ZA"); err != nil || len(list) != 1 || list[0].ID != kept.ID {
		t.Errorf("the company lists %+v, %v; want only the other subscription", list, err)
	}
	if moved, err := st.AdvanceCursor(ctx, sub.ID, sub.Cursor, sub.Cursor+2); err != nil || moved {
		t.Errorf("a fan-out moved the cursor of a subscription being deleted (%v, %v)", moved, err)
	}
	if err := st.DropIfDeleting(ctx, sub.ID, logged); err != nil {
		t.Fatal(err)
	}
	if err := st.DropIfDeleting(ctx, kept.ID, logged); err != nil {
		t.Fatal(err)
	}
	for _, l := range logged {
		if _, err := st.Delivery(ctx, events.DeliveryID(sub.ID, l.ID)); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("a delivery made for the subscription being deleted is still there: %v", err)
		}
		if _, err := st.Delivery(ctx, events.DeliveryID(kept.ID, l.ID)); err != nil {
			t.Errorf("the other subscription's delivery: %v", err)
		}
	}
	if n, err := st.FinishDeletions(ctx); err != nil || n != 1 {
		t.Fatalf("FinishDeletions = %d, %v; want the one deletion finished", n, err)
	}
	var left []bson.M
	cur, err := db.Collection("subscriptions").Find(ctx, bson.D{{Key: "companyId", Value: "ZA"}})
	if err == nil {
		err = cur.All(ctx, &left)
	}
	if err != nil || len(left) != 1 || left[0]["_id"] != kept.ID {
		t.Errorf("subscriptions left %v, %v; want only %s", left, err, kept.ID)
	}
}
