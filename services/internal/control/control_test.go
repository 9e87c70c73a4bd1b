package control_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/control"
	"github.com/zcustody/suite/services/internal/journal"
)

func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, journal.Indexes(""), map[string]string{
		"journal_accounts find range(ledgerSeq)": "Reconcile reads every holder that took an entry",
		"wallets find range(ledgerSeq)":          "Reconcile reads every holder that took an entry",
		"journal_history find {}":                "Reconcile folds the whole history",
		"journal_entries find {}":                "Reconcile checks every entry's completeness",
	}))
}

// TestScheduledReconciliationRaisesAnEventOnAPlantedDifference: a clean journal passes; a
// second replica does not run the pass its peer just ran; a difference planted in a wallet's
// counters is found by the next pass, which shows it in the metrics, names the account and
// stages a ledger.reconciliation.failed event for the custodian's operators.
func TestScheduledReconciliationRaisesAnEventOnAPlantedDifference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	j := journal.New(journal.Config{DB: db, Collections: []string{"wallets"}, Now: clock, Policy: func(h string) journal.HolderPolicy {
		if strings.HasPrefix(h, "W") {
			return journal.HolderPolicy{Collection: "wallets", Constrained: true}
		}
		return journal.HolderPolicy{Create: true}
	}})
	if err := j.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("wallets").InsertOne(ctx, bson.D{{Key: "_id", Value: "W1"}, {Key: "companyId", Value: "ZTEST"}}); err != nil {
		t.Fatal(err)
	}
	five := amount.MustStored("5")
	if _, err := j.Record(ctx, journal.Entry{ID: "dep-1", Kind: journal.Single, Code: "test.deposit", Legs: []journal.Leg{
		{Holder: "world:deposits", Currency: "BTC", Side: journal.Debit, Amount: five}, {Holder: "W1", Currency: "BTC", Side: journal.Credit, Amount: five}}}); err != nil {
		t.Fatal(err)
	}
	check := func(ctx context.Context) ([]string, error) {
		r, err := j.Reconcile(ctx)
		return r.Violations, err
	}
	replica := func(reg prometheus.Registerer) *control.Control {
		c, err := control.New(control.Config{DB: db, Name: "trading.journal", Entity: catalog.EntityTradingReconciliation, Check: check,
			Interval: time.Minute, Custodian: "ZCUSTODY", Metrics: reg, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	reg := prometheus.NewRegistry()
	one, two := replica(reg), replica(nil)

	out, err := one.Pass(ctx)
	if err != nil || !out.Ran || len(out.Differences) != 0 {
		t.Fatalf("first pass on a clean journal: %+v, %v", out, err)
	}
	if got := gauge(t, reg, control.MetricLastClean); got != float64(now.Unix()) {
		t.Errorf("last clean run = %v, want %v", got, now.Unix())
	}
	now = now.Add(30 * time.Second)
	if out, err := two.Pass(ctx); err != nil || out.Ran {
		t.Errorf("a second replica half an interval later: %+v, %v; want the pass left to its peer", out, err)
	}

	// The planted difference: W1's credits changed behind the journal's back.
	if _, err := db.Collection("wallets").UpdateOne(ctx, bson.D{{Key: "_id", Value: "W1"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "accounts.BTC.cPost", Value: "7"}}}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	out, err = two.Pass(ctx)
	if err != nil || !out.Ran || len(out.Differences) == 0 {
		t.Fatalf("pass after the planted difference: %+v, %v; want it found", out, err)
	}
	if !strings.Contains(strings.Join(out.Differences, "\n"), "W1") {
		t.Errorf("the differences %q do not name W1", out.Differences)
	}
	if out, err := one.Pass(ctx); err != nil || out.Ran { // the peer's pass is recent: it only shows it
		t.Fatalf("the first replica right after its peer's pass: %+v, %v", out, err)
	}
	if got := gauge(t, reg, control.MetricDifferences); got != float64(len(out.Differences)) {
		t.Errorf("differences gauge of the other replica = %v, want %d", got, len(out.Differences))
	}
	if got := gauge(t, reg, control.MetricLastClean); got != float64(now.Add(-90*time.Second).Unix()) {
		t.Errorf("last clean run after a failed pass = %v, want the first pass's", got)
	}
	ev := stagedEvent(t, db)
	if ev.Type != control.EventFailed || ev.CompanyID != "ZCUSTODY" || ev.Entity.Type != catalog.EntityTradingReconciliation || ev.Entity.ID != "trading.journal" {
		t.Errorf("staged event %+v; want %s to ZCUSTODY of trading.journal", ev, control.EventFailed)
	}
	var data struct {
		Control     string   `json:"control"`
		Differences int      `json:"differences"`
		Samples     []string `json:"samples"`
		LastCleanAt string   `json:"lastCleanAt"`
	}
	if err := json.Unmarshal([]byte(ev.Data), &data); err != nil {
		t.Fatalf("event data %s: %v", ev.Data, err)
	}
	if data.Control != "trading.journal" || data.Differences != len(out.Differences) || len(data.Samples) == 0 || data.LastCleanAt != "2026-11-27T12:00:00.000Z" {
		t.Errorf("event data %s", ev.Data)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

type stagedDoc struct {
	Type      string `bson:"type"`
	CompanyID string `bson:"companyId"`
	Entity    struct {
		Type string `bson:"type"`
		ID   string `bson:"id"`
	} `bson:"entity"`
	Data string `bson:"data"`
}

func stagedEvent(t *testing.T, db *mongo.Database) stagedDoc {
	t.Helper()
	var d struct {
		Outbox []stagedDoc `bson:"outbox"`
	}
	if err := db.Collection(control.Collection).FindOne(context.Background(), bson.D{{Key: "_id", Value: "trading.journal"}}).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if len(d.Outbox) != 1 {
		t.Fatalf("outbox holds %d events, want 1", len(d.Outbox))
	}
	return d.Outbox[0]
}
