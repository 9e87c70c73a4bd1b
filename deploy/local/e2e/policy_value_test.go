package e2e_test

import (
	"context"
	"net/http"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/mongodb"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// TestWithdrawalRequestKeepsItsUSDValue: ZTEST's maker requests a withdrawal of 0.01 BTC from
// its demo trading wallet to its demo custody wallet through the gateway; interchange, its
// owner, values it at trading's BTC price (read as interchange through trading's ledger API)
// and the service desk keeps that value on the request, where its policy matched it. The
// test adopts no policy (ZTEST's and ZACME's are other tests'): that a value above a rule's
// threshold picks that rule is the service desk's own test (TestOwnersValueDecidesTheRule).
func TestWithdrawalRequestKeepsItsUSDValue(t *testing.T) {
	t.Parallel()
	conn, ctx := internalConnAs(t, "trading", "interchange", "interchange-internal.pem")
	prices, err := tradingv1.NewTradingLedgerServiceClient(conn).GetPrices(ctx(), &tradingv1.GetPricesRequest{})
	if err != nil {
		t.Fatalf("interchange reads trading's prices: %v", err)
	}
	var btc string
	for _, p := range prices.GetPrices() {
		if p.GetCurrency() == "BTC" {
			btc = p.GetUsd()
		}
	}
	if btc != "65000.00" {
		t.Fatalf("trading's prices %v: BTC at %q, want the demo's 65000.00", prices.GetPrices(), btc)
	}
	const want = "650" // 0.01 × 65000.00, exact, canonical

	got := create(t, demo.CompanyZTEST, maker, createBody(t, withdrawalService, withdrawalPayload("ZTEST-TW-DEMO000001", "ZTEST-NOBENF-DEMO000001", "0.01")))
	client, err := mongodb.Connect(context.Background(), env.stack.MongoURI)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	var doc struct {
		USD           string `bson:"usd"`
		PolicyVersion int64  `bson:"policyVersion"`
		Rule          struct {
			Name string `bson:"name"`
		} `bson:"rule"`
	}
	if err := client.Database("servicedesk").Collection("requests").FindOne(context.Background(), bson.D{{Key: "_id", Value: got.RequestID}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.USD != want || doc.Rule.Name == "" {
		t.Errorf("stored request worth %q USD, decided by rule %q of version %d; want %s USD (0.01 BTC at %s) and a rule", doc.USD, doc.Rule.Name, doc.PolicyVersion, want, btc)
	}
	if q := pendingQuorum(t, viewer, got.RequestID); q.Rule != doc.Rule.Name {
		t.Errorf("the pending view's quorum names rule %q, the request %q", q.Rule, doc.Rule.Name)
	}
	wantStatus(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": got.RequestID})), "CANCELLED")
}
