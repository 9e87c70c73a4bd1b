package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
	"github.com/zcustody/suite/services/trading"
)

// The attack scenarios of the money core, from outside: signed requests through the gateway
// and the settlement engine's own key. Each test's venue fixture reconciles trading's journal
// when it ends.

// TestNettingCannotPayMoreThanHeld: a brand-new USDC wallet with nothing in it cannot make
// its venue pay it: a client cannot instruct at all, a net that is not the sum of its legs
// is refused, and a correct instruction waits for funds the wallet does not have, the
// venue's wallet untouched.
func TestNettingCannotPayMoreThanHeld(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "0", "0", "0", "0")
	usdc := f.put(t, "USDC", "0", trading.StatusActive)
	deposit(t, trading.VenueCompanyID(f.venue), trading.VenueWalletID(f.venue, "USDC"), "USDC", "10000000")
	send := func(c *signing.Client, amount, net string) response {
		body := instructionBody("NET-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(usdc, "USDC", "ETH", amount)},
			map[string]any{"currency": "USDC", "ledger": "ETH", "amount": net})
		return do(t, c, http.MethodPost, settlementCreatePath, mustJSON(t, body))
	}
	if msg := wantError(t, send(newClient(demo.CompanyZTEST, company), "-10000000", "-10000000"), http.StatusForbidden, "ER-403"); !strings.Contains(msg, demo.CompanyZTEST) {
		t.Errorf("a client instructing its own payable: %q, want the company named", msg)
	}
	operator := f.operatorClient(company)
	if msg := wantError(t, send(operator, "10000000", "-10000000"), http.StatusBadRequest, "ER-108"); !strings.Contains(msg, "netSettlements[0].amount") {
		t.Errorf("a net paying the client what its legs owe the venue: %q, want netSettlements[0].amount named", msg)
	}
	var created settlementAnswer
	wantOK(t, send(operator, "10000000", "10000000"), &created)
	engine := newSettlementEngine(t)
	engine.mustAdvance(t, created.SettlementTrackingID, "SETTLEMENT_INITIATED", "SETTLEMENT_INITIATED")
	engine.mustAdvance(t, created.SettlementTrackingID, "SETTLEMENT_PAY_IN", "SETTLEMENT_AWAITING_FUNDS")
	if _, err := engine.advance(created.SettlementTrackingID, "SETTLEMENT_PAY_OUT"); grpcERCode(err) != "ER-409" {
		t.Errorf("PAY_OUT while awaiting funds: %v, want 409 ER-409", err)
	}
	if got := clientBalances(t, usdc)[usdc]; got != (amounts{"0", "0", "0", "0"}) {
		t.Errorf("client USDC = %v, want 0", got)
	}
	if got := f.venueBalance(t, "USDC"); got != (amounts{"10000000", "10000000", "0", "0"}) {
		t.Errorf("venue USDC = %v, want untouched", got)
	}
}

// TestManyLegsSettlementCompletes: 150 legs of one satoshi go through PAY_IN, PAY_OUT and
// COMPLETE, each amount moved once.
func TestManyLegsSettlementCompletes(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	legs := make([]map[string]any, 150)
	for i := range legs {
		legs[i] = legOf(f.btc, "BTC", "BTC", "0.00000001")
	}
	id := f.createSettlement(t, instructionBody("LEGS-"+uuid.NewString()[:8], f.venue, legs)).SettlementTrackingID
	engine := newSettlementEngine(t)
	for _, to := range []string{"SETTLEMENT_INITIATED", "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE"} {
		engine.mustAdvance(t, id, to, to)
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.9999985", "0.9999985", "0", "0"}) {
		t.Errorf("client BTC = %v, want 1 - 150 satoshis", got)
	}
	if got := f.venueBalance(t, "BTC"); got != (amounts{"0.0000015", "0.0000015", "0", "0"}) {
		t.Errorf("venue BTC = %v, want 150 satoshis", got)
	}
}

// TestFailedAfterPayInReleasesOnce: racing FAILED calls after a PAY_IN give the payer back
// exactly what was held, once; nothing reaches the venue.
func TestFailedAfterPayInReleasesOnce(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "2", "0", "0", "0")
	id := f.createSettlement(t, instructionBody("FAIL-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "1.5")})).SettlementTrackingID
	engine := newSettlementEngine(t)
	engine.mustAdvance(t, id, "SETTLEMENT_INITIATED", "SETTLEMENT_INITIATED")
	engine.mustAdvance(t, id, "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_IN")
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.5", "2", "1.5", "0"}) {
		t.Errorf("client BTC after PAY_IN = %v, want 1.5 held", got)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Go(func() {
			if _, err := engine.advance(id, "SETTLEMENT_FAILED"); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d FAILED calls won, want 1", wins)
	}
	if _, err := engine.advance(id, "SETTLEMENT_FAILED"); grpcERCode(err) != "ER-409" {
		t.Errorf("FAILED again: %v, want 409", err)
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"2", "2", "0", "0"}) {
		t.Errorf("client BTC after FAILED = %v, want 2 again", got)
	}
	if got := f.venueBalance(t, "BTC"); got != (amounts{"0", "0", "0", "0"}) {
		t.Errorf("venue BTC = %v, want nothing", got)
	}
}

// TestWalletDocumentDoesNotGrow: a wallet that takes many entries keeps a bounded document
// (its balances, a version and a bounded marker list); its history lives in the journal.
func TestWalletDocumentDoesNotGrow(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "0", "0", "0", "0")
	size := func() (int, int) {
		var raw bson.Raw
		if err := f.db.Collection("wallets").FindOne(t.Context(), bson.D{{Key: "_id", Value: f.btc}}).Decode(&raw); err != nil {
			t.Fatal(err)
		}
		markers, _ := raw.Lookup("ledgerMarkers").Array().Values()
		for _, field := range []string{"movements", "movementIds", "balances"} {
			if _, err := raw.LookupErr(field); err == nil {
				t.Errorf("the wallet document holds %q", field)
			}
		}
		return len(raw), len(markers)
	}
	for i := range 70 {
		deposit(t, demo.CompanyZTEST, f.btc, "BTC", satoshis(i+1))
	}
	after70, markers := size()
	for i := range 70 {
		deposit(t, demo.CompanyZTEST, f.btc, "BTC", satoshis(i+71))
	}
	after140, markers2 := size()
	if markers > 64 || markers2 > 64 || after140 > after70+2048 {
		t.Errorf("wallet document: %d bytes and %d markers after 70 entries, %d bytes and %d markers after 140; want bounded",
			after70, markers, after140, markers2)
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.0000987", "0.0000987", "0", "0"}) {
		t.Errorf("client BTC after 140 deposits = %v, want their sum 0.0000987", got)
	}
}

// satoshis writes n satoshis as a canonical BTC amount.
func satoshis(n int) string {
	s := strings.TrimRight(fmt.Sprintf("0.%08d", n), "0")
	return strings.TrimSuffix(s, ".")
}

// walletPosting is one row of the wallet history extension.
type walletPosting struct {
	Sequence         string `json:"sequence"`
	EntryID          string `json:"entryId"`
	Type             string `json:"type"`
	Reference        string `json:"reference"`
	Currency         string `json:"currency"`
	AvailableChange  string `json:"availableChange"`
	LedgerChange     string `json:"ledgerChange"`
	AvailableBalance string `json:"availableBalance"`
	LedgerBalance    string `json:"ledgerBalance"`
	PendingOut       string `json:"pendingOutBalance"`
}

type historyPage struct {
	Items      []walletPosting `json:"items"`
	NextCursor string          `json:"nextCursor"`
}

// TestWalletHistory: a wallet's statement through the gateway lists every posting in order,
// each with the balances after it, pages by a cursor, filters by reference, and shows
// nothing of another company's wallet.
func TestWalletHistory(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "2", "0", "0", "0")
	id := f.createSettlement(t, instructionBody("HIST-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "0.5")})).SettlementTrackingID
	engine := newSettlementEngine(t)
	for _, to := range []string{"SETTLEMENT_INITIATED", "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE"} {
		engine.mustAdvance(t, id, to, to)
	}
	viewerClient := newClient(demo.CompanyZTEST, viewer)
	read := func(body map[string]any) historyPage {
		var p historyPage
		wantOK(t, do(t, viewerClient, http.MethodPost, "/v3/api/trading/wallets/history", mustJSON(t, body)), &p)
		return p
	}
	var all []walletPosting
	cursor := ""
	for range 5 {
		p := read(map[string]any{"walletId": f.btc, "paginationLimit": 1, "cursor": cursor})
		all = append(all, p.Items...)
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	var got []string
	for _, p := range all {
		got = append(got, fmt.Sprintf("%s %s %s/%s", p.Type, p.AvailableChange, p.AvailableBalance, p.LedgerBalance))
	}
	want := []string{"deposit 2 2/2", "settlement.payin -0.5 1.5/2", "settlement.post 0 1.5/1.5"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history paged one by one = %v, want %v", got, want)
	}
	postingEvents(t, demo.CompanyZTEST, f.btc, all)
	if p := read(map[string]any{"walletId": f.btc, "reference": id}); len(p.Items) != 2 || p.Items[0].Reference != id {
		t.Errorf("history of settlement %s = %+v, want its hold and post", id, p.Items)
	}
	wantError(t, do(t, newClient(demo.CompanyZACME, viewer), http.MethodPost, "/v3/api/trading/wallets/history",
		mustJSON(t, map[string]any{"walletId": f.btc})), http.StatusNotFound, "ER-102")
	wantError(t, do(t, viewerClient, http.MethodPost, "/v3/api/trading/wallets/history",
		mustJSON(t, map[string]any{"walletId": f.btc, "cursor": "x"})), http.StatusBadRequest, "ER-108")
}

// postingEvents checks that each posting of the company's wallet reaches the company's
// events as journal.entry.posted, its entry's event to that company (entity
// trading_entry <entryId>@<company>, version 1) showing the wallet's posting as the
// statement does.
func postingEvents(t *testing.T, companyID, walletID string, postings []walletPosting) {
	t.Helper()
	for _, p := range postings {
		var page eventPage
		waitUntil(t, 20*time.Second, "the event of entry "+p.EntryID, func() bool {
			page = eventPage{}
			wantOK(t, do(t, newClient(companyID, viewer), http.MethodPost, "/v3/api/events/search", mustJSON(t, map[string]any{
				"entityType": "trading_entry", "entityId": p.EntryID + "@" + companyID})), &page)
			return len(page.Items) > 0
		})
		e := page.Items[0]
		if len(page.Items) != 1 || e.Type != "journal.entry.posted" || e.Entity.Version != "1" || e.CompanyID != companyID {
			t.Errorf("events of entry %s: %+v; want one journal.entry.posted, version 1", p.EntryID, page.Items)
			continue
		}
		var got []string
		for _, raw := range e.Data["postings"].([]any) {
			q := raw.(map[string]any)
			got = append(got, fmt.Sprintf("%s %s %s %s/%s", q["walletId"], q["sequence"], q["availableChange"], q["availableBalance"], q["ledgerBalance"]))
		}
		want := fmt.Sprintf("%s %s %s %s/%s", walletID, p.Sequence, p.AvailableChange, p.AvailableBalance, p.LedgerBalance)
		if e.Data["entryId"] != p.EntryID || e.Data["type"] != p.Type || len(got) != 1 || got[0] != want {
			t.Errorf("event of entry %s shows %v (%v), want [%s] as the statement", p.EntryID, got, e.Data, want)
		}
	}
}
