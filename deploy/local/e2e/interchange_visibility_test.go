package e2e_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
	"github.com/zcustody/suite/services/trading"
)

const withdrawalSearchPath = "/v3/api/interchange/withdrawal/search"

// seenSettlements is what a settlement search answers: per settlement request id, the
// wallets of its legs, and its number of nets.
func seenSettlements(t *testing.T, c *signing.Client, requestIDs ...string) (legs map[string][]string, nets map[string]int) {
	t.Helper()
	var got struct {
		Total int `json:"total"`
		Items []struct {
			RequestID   string `json:"settlementRequestId"`
			Settlements []struct {
				Counterparty struct {
					Value string `json:"value"`
				} `json:"counterparty"`
			} `json:"settlements"`
			NetSettlements []any `json:"netSettlements"`
		} `json:"items"`
	}
	wantOK(t, do(t, c, http.MethodPost, settlementSearchPath, mustJSON(t, map[string]any{"settlementRequestIds": requestIDs})), &got)
	legs, nets = map[string][]string{}, map[string]int{}
	for _, it := range got.Items {
		for _, l := range it.Settlements {
			legs[it.RequestID] = append(legs[it.RequestID], l.Counterparty.Value)
		}
		slices.Sort(legs[it.RequestID])
		nets[it.RequestID] = len(it.NetSettlements)
	}
	if got.Total != len(got.Items) {
		t.Errorf("settlement search: total %d for %d items", got.Total, len(got.Items))
	}
	return legs, nets
}

// seenWithdrawals is what a withdrawal search answers for the given transfer ids: their
// statuses.
func seenWithdrawals(t *testing.T, c *signing.Client, transferIDs ...string) map[string]string {
	t.Helper()
	var got struct {
		Total int `json:"total"`
		Items []struct {
			TransferID string `json:"transferId"`
			CompanyID  string `json:"companyId"`
			VenueID    string `json:"venueId"`
			Status     string `json:"status"`
			Amount     string `json:"amount"`
		} `json:"items"`
	}
	wantOK(t, do(t, c, http.MethodPost, withdrawalSearchPath, mustJSON(t, map[string]any{"transferIds": transferIDs})), &got)
	out := map[string]string{}
	for _, it := range got.Items {
		out[it.TransferID] = it.Status
	}
	return out
}

// TestWhatEachSideSees: a venue's operator sees every settlement and withdrawal at its
// venue, whole; another venue's operator sees none of them and cannot decide them (404); a
// client sees the settlements that move its wallets with only its own legs and no nets, and
// its own withdrawals; another client sees none of them. The operator sees nothing else of
// its clients: not their custody wallets, nor their service requests.
func TestWhatEachSideSees(t *testing.T) {
	t.Parallel()
	a := newVenueFixture(t, "1", "0", "1", "0")
	b := newVenueFixture(t, "1", "0", "1", "0")
	now := time.Now().UTC().Truncate(time.Millisecond)
	acme := trading.Wallet{ID: trading.NewWalletID(demo.CompanyZACME), VenueID: a.venue, Name: "E2E ACME", Status: trading.StatusActive,
		CompanyID: demo.CompanyZACME, Currency: "BTC", CustomProperties: `{}`, CreatedAt: now, UpdatedAt: now, Version: 1, RequestID: "E2E"}
	if err := a.store.PutWallet(t.Context(), acme); err != nil {
		t.Fatal(err)
	}
	deposit(t, demo.CompanyZACME, acme.ID, "BTC", "1")

	// At venue A: a settlement with a leg of each client and a net, and a ZTEST withdrawal.
	stlA := "SEEN-" + a.venue
	body := instructionBody(stlA, a.venue, []map[string]any{legOf(a.btc, "BTC", "BTC", "0.1"), legOf(acme.ID, "BTC", "BTC", "-0.05")},
		map[string]any{"currency": "BTC", "ledger": "BTC", "amount": "0.05"})
	a.createSettlement(t, body)
	wdA := pendingWithdrawal(t, a.btc, "0.2")
	// At venue B: a settlement and a withdrawal of ZTEST.
	stlB := "SEEN-" + b.venue
	b.createSettlement(t, instructionBody(stlB, b.venue, []map[string]any{legOf(b.btc, "BTC", "BTC", "0.1")}))
	wdB := pendingWithdrawal(t, b.btc, "0.3")

	ztest, zacme := newClient(demo.CompanyZTEST, viewer), newClient(demo.CompanyZACME, viewer)
	both := []string{stlA, stlB}
	for _, tt := range []struct {
		name     string
		as       *signing.Client
		wantLegs map[string][]string
		wantNets map[string]int
		wantWd   map[string]string
	}{
		{"venue A's operator", a.operatorClient(viewer), map[string][]string{stlA: sorted(a.btc, acme.ID)}, map[string]int{stlA: 1},
			map[string]string{wdA: "PENDING_CONFIRMATION"}},
		{"venue B's operator", b.operatorClient(company), map[string][]string{stlB: {b.btc}}, map[string]int{stlB: 0},
			map[string]string{wdB: "PENDING_CONFIRMATION"}},
		{"ZTEST, a client at both", ztest, map[string][]string{stlA: {a.btc}, stlB: {b.btc}}, map[string]int{stlA: 0, stlB: 0},
			map[string]string{wdA: "PENDING_CONFIRMATION", wdB: "PENDING_CONFIRMATION"}},
		{"ZACME, a client at A", zacme, map[string][]string{stlA: {acme.ID}}, map[string]int{stlA: 0}, map[string]string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			legs, nets := seenSettlements(t, tt.as, both...)
			if diff := cmp.Diff(tt.wantLegs, legs); diff != "" {
				t.Errorf("settlement legs seen (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNets, nets); diff != "" {
				t.Errorf("nets seen (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWd, seenWithdrawals(t, tt.as, wdA, wdB)); diff != "" {
				t.Errorf("withdrawals seen (-want +got):\n%s", diff)
			}
		})
	}

	// Venue B's operator cannot act on venue A's withdrawal, nor A's on B's.
	wantError(t, confirmAs(t, b.operatorClient(company), wdA, "ACCEPT", ""), http.StatusNotFound, "ER-102")
	wantError(t, confirmAs(t, a.operatorClient(maker), wdB, "DECLINE", "not ours"), http.StatusNotFound, "ER-102")
	if got := seenWithdrawals(t, ztest, wdA, wdB); got[wdA] != "PENDING_CONFIRMATION" || got[wdB] != "PENDING_CONFIRMATION" {
		t.Errorf("withdrawals after the other venue's attempts: %v, want both still pending", got)
	}
	// Venue B's operator does not find A's settlement by its status either.
	wantError(t, settlementStatus(t, b.operatorClient(company), stlA), http.StatusNotFound, "ER-102")

	// Nothing else of its clients: not their custody wallets, not their service requests.
	var wallets struct {
		Wallets []struct {
			WalletCompany string `json:"walletCompany"`
		} `json:"wallets"`
	}
	wantOK(t, do(t, a.operatorClient(company), http.MethodGet, walletsPath, nil), &wallets)
	for _, w := range wallets.Wallets {
		if w.WalletCompany != a.operator {
			t.Errorf("venue A's operator lists a custody wallet of %s", w.WalletCompany)
		}
	}
	request := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload("Not the venues"))).RequestID
	var opRequests searchAnswer
	wantOK(t, do(t, a.operatorClient(viewer), http.MethodPost, requestsPath, mustJSON(t, map[string]any{"requestIds": []string{request}})), &opRequests)
	if opRequests.Total != 0 {
		t.Errorf("venue A's operator finds ZTEST's service request %s", request)
	}
}

func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}
