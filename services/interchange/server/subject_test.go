package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/funds"
	"github.com/zcustody/suite/services/trading"
)

// putPrice sets a currency's price in trading's table, as set at.
func (f fixture) putPrice(t *testing.T, currency, usd string, at time.Time) {
	t.Helper()
	if err := f.ledger.store.PutPrice(context.Background(), trading.Price{Currency: currency, Price: usd, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
}

// TestRequestsReportTheirPolicySubject: a withdrawal request and a settlement instruction
// report to the service desk the wallet the money leaves, its currency, its value in US
// dollars at trading's price (read through trading's ledger API and its authorisation) and
// the destination's kind. Without a price, or with one older than PRICE_MAX_AGE, the value
// is empty and the request is validated all the same.
func TestRequestsReportTheirPolicySubject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.wired.Plugin(nil)
	subject := func(sr *pluginv1.ServiceRequest) *pluginv1.PolicySubject {
		t.Helper()
		v, err := p.Validate(servicedeskCtx(), &pluginv1.ValidateRequest{Request: sr})
		if err != nil {
			t.Fatalf("validate %s: %v", sr.GetRequestId(), err)
		}
		return v.GetSubject()
	}
	check := func(name string, got, want *pluginv1.PolicySubject) {
		t.Helper()
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s: subject mismatch (-want +got):\n%s", name, diff)
		}
	}
	own := func(wallet, currency, usd string) *pluginv1.PolicySubject {
		return &pluginv1.PolicySubject{WalletId: wallet, Currency: currency, UsdValue: usd, Destination: "OWN_CUSTODY_WALLET"}
	}

	check("a withdrawal without a price", subject(withdrawalRequest(t, "SERV-REQ-1", btcWallet, custodyBTC, "0.01")), own(btcWallet, "BTC", ""))
	now := f.clock.Now()
	f.putPrice(t, "BTC", "65000.00", now.Add(-10*time.Minute))
	f.putPrice(t, "ETH", "3200.00", now.Add(-funds.DefaultPriceMaxAge-time.Second))
	check("a withdrawal of 0.01 BTC at 65000.00", subject(withdrawalRequest(t, "SERV-REQ-2", btcWallet, custodyBTC, "0.01")), own(btcWallet, "BTC", "650"))
	check("a withdrawal with a stale price", subject(withdrawalRequest(t, "SERV-REQ-3", ethWallet, custodyETH, "1")), own(ethWallet, "ETH", ""))
	f.putPrice(t, "ETH", "3200.00", now)
	check("a withdrawal of 1.000000000000000001 ETH once its price is fresh", subject(withdrawalRequest(t, "SERV-REQ-4", ethWallet, custodyETH, "1.000000000000000001")),
		own(ethWallet, "ETH", "3200.0000000000000032"))

	// An instruction's money leaves the client's wallet for a receivable, the venue's
	// settlement wallet for a payable; it goes to no destination of the policy's kinds.
	check("a receivable", subject(instructionRequest(t, "SERV-REQ-RCV", transferPayload(btcWallet, "BYBIT-ISW-BTC", "0.3"), venue)),
		&pluginv1.PolicySubject{WalletId: btcWallet, Currency: "BTC", UsdValue: "19500"})
	check("a payable", subject(instructionRequest(t, "SERV-REQ-PAY", transferPayload("BYBIT-ISW-BTC", btcWallet2, "0.2"), venue)),
		&pluginv1.PolicySubject{WalletId: "BYBIT-ISW-BTC", Currency: "BTC", UsdValue: "13000"})

	// Validating wrote nothing: no withdrawal, no settlement, no hold.
	for _, col := range []string{"withdrawals", "settlements"} {
		if n, err := f.db.Collection(col).CountDocuments(context.Background(), map[string]any{}); err != nil || n != 0 {
			t.Errorf("%s after validating only: %d, %v; want none", col, n, err)
		}
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0", "0", "0"} {
		t.Errorf("trading BTC after validating only = %v, want untouched", got)
	}
}
