package server_test

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/amount"
)

func TestCreateIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := valid()
	first, err := f.svc.CreateSettlement(f.venueCtx(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.GetStatus() != settlement.StatusReceived || first.GetSettlementRequestId() != "REQ-1" || len(first.GetSettlementTrackingId()) != 20 {
		t.Fatalf("first answer %v, want REQ-1 RECEIVED with a STL- tracking id", first)
	}
	f.mustAdvance(t, first.GetSettlementTrackingId(), settlement.StatusInitiated, settlement.StatusInitiated)
	again, err := f.svc.CreateSettlement(f.venueCtx(), proto.Clone(req).(*interchangev1.CreateSettlementRequest))
	if err != nil || !proto.Equal(first, again) {
		t.Errorf("repeat = %v, %v; want the first answer %v", again, err, first)
	}
	other := valid()
	other.Settlements[0].Amount = "1.6"
	_, err = f.svc.CreateSettlement(f.venueCtx(), other)
	wantAppErr(t, err, "ER-104", "header.settlementRequestId")
	if status.Code(err) != codes.AlreadyExists {
		t.Errorf("code %s, want AlreadyExists (409)", status.Code(err))
	}
	// The request id is scoped to the operator: DERIBIT's may use REQ-1 for its own instruction.
	deribit := instruction("REQ-1", []*interchangev1.Settlement{leg(deribitBTC, "BTC", "BTC", "0.1")})
	deribit.Header.VenueId = "DERIBIT"
	if _, err := f.svc.CreateSettlement(f.operatorCtx(zderibit, "DERIBIT"), deribit); err != nil {
		t.Errorf("ZDERIBIT's REQ-1: %v", err)
	}
}

func TestRacingCreatesStoreOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var wg sync.WaitGroup
	answers := make(chan string, 20)
	for range 20 {
		wg.Go(func() {
			resp, err := f.svc.CreateSettlement(f.venueCtx(), valid())
			if err != nil {
				t.Errorf("create: %v", err)
				return
			}
			answers <- resp.GetSettlementTrackingId()
		})
	}
	wg.Wait()
	close(answers)
	seen := map[string]int{}
	for id := range answers {
		seen[id]++
	}
	if len(seen) != 1 {
		t.Errorf("tracking ids %v, want one for all 20 answers", seen)
	}
	got, err := f.svc.SearchSettlements(f.venueCtx(), &interchangev1.SearchSettlementsRequest{})
	if err != nil || got.GetTotal() != 1 {
		t.Errorf("search = %v, %v; want one settlement", got, err)
	}
}

func TestCreateChecksWallets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const counterparty = "settlements[0].counterparty.value"
	tests := []struct {
		name      string
		leg       *interchangev1.Settlement
		wantCode  string
		wantField string
		// what the settlement engine gets instructing the same leg for ZTEST (its own wallets)
		engineCode string
	}{
		{"unknown wallet", leg("ZTEST-TW-NOPE000001", "BTC", "BTC", "1"), "ER-102", counterparty, "ER-102"},
		{"a client's wallet at a venue it does not operate", leg(deribitBTC, "BTC", "BTC", "1"), "ER-102", counterparty, "ER-108"},
		{"its own wallet at another venue", leg(bybitOwn, "BTC", "BTC", "1"), "ER-108", counterparty, "ER-102"},
		{"deactivated", leg("ZTEST-TW-CLOSED0001", "BTC", "BTC", "1"), "ER-113", counterparty, "ER-113"},
		{"currency of another wallet", leg(ethWallet, "BTC", "BTC", "1"), "ER-108", "settlements[0].currency", "ER-108"},
		{"the venue's own settlement wallet", leg(venueBTC, "BTC", "BTC", "1"), "ER-108", counterparty, "ER-102"},
	}
	f.ledger.fund(t, venueCompany, venueBTC, "BTC", "1") // it exists once it holds something
	for i, tt := range tests {
		req := instruction(fmt.Sprintf("W-%d", i), []*interchangev1.Settlement{tt.leg})
		_, err := f.svc.CreateSettlement(f.venueCtx(), req)
		t.Run(tt.name, func(t *testing.T) { wantAppErr(t, err, tt.wantCode, tt.wantField) })
		// The settlement engine instructs for a company, naming that company's wallets only.
		venueReq := instruction(fmt.Sprintf("WV-%d", i), []*interchangev1.Settlement{tt.leg})
		venueReq.Settlements[0].Amount = "-1"
		_, err = f.engine.InstructSettlement(engineCtx(), &interchangev1.InstructSettlementRequest{CompanyId: ztest, Instruction: venueReq})
		t.Run(tt.name+" instructed by the engine", func(t *testing.T) { wantAppErr(t, err, tt.engineCode, tt.wantField) })
	}
	_, err := f.engine.InstructSettlement(engineCtx(), &interchangev1.InstructSettlementRequest{CompanyId: ztest,
		Instruction: instruction("WV-ACME", []*interchangev1.Settlement{leg(acmeBTC, "BTC", "BTC", "-1")})})
	t.Run("another client's wallet instructed by the engine", func(t *testing.T) { wantAppErr(t, err, "ER-102", counterparty) })
}

// TestPayablesComeFromTheVenueSide: a client's instruction (endpoint 3) is 403, payable or
// not, and nothing is stored; the settlement engine instructs for a company, idempotently
// by the company's request id.
func TestPayablesComeFromTheVenueSide(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.svc.CreateSettlement(f.companyCtx(ztest), trade("PAY-1"))
	wantAppErr(t, err, "ER-403", "")
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("code %s, want PermissionDenied (403)", status.Code(err))
	}
	if got, err := f.svc.SearchSettlements(f.companyCtx(ztest), &interchangev1.SearchSettlementsRequest{}); err != nil || got.GetTotal() != 0 {
		t.Errorf("search after a refused payable = %v, %v; want nothing stored", got, err)
	}
	instruct := func(company string, req *interchangev1.CreateSettlementRequest) (*interchangev1.InstructSettlementResponse, error) {
		return f.engine.InstructSettlement(engineCtx(), &interchangev1.InstructSettlementRequest{CompanyId: company, Instruction: req})
	}
	first, err := instruct(ztest, trade("PAY-1"))
	if err != nil || first.GetResult().GetStatus() != settlement.StatusReceived || first.GetResult().GetSettlementRequestId() != "PAY-1" {
		t.Fatalf("InstructSettlement = %v, %v; want PAY-1 RECEIVED", first, err)
	}
	again, err := instruct(ztest, trade("PAY-1"))
	if err != nil || !proto.Equal(first, again) {
		t.Errorf("repeat = %v, %v; want the first answer %v", again, err, first)
	}
	other := trade("PAY-1")
	other.Settlements[1].Amount = "-21"
	other.NetSettlements[0].Amount = "-21"
	_, err = instruct(ztest, other)
	wantAppErr(t, err, "ER-104", "header.settlementRequestId")
	if _, err := f.svc.CreateSettlement(f.companyCtx(ztest), trade("PAY-1")); status.Code(err) != codes.PermissionDenied {
		t.Errorf("the company repeats the engine's payable: %v, want PermissionDenied", err)
	}
	_, err = instruct("", trade("PAY-2"))
	wantAppErr(t, err, "ER-101", "companyId")
	_, err = instruct("ztest x", trade("PAY-2"))
	wantAppErr(t, err, "ER-108", "companyId")
	_, err = instruct(zacme, trade("PAY-2"))
	wantAppErr(t, err, "ER-102", "settlements[0].counterparty.value")
}

// TestConfiguredBounds: the service applies Deps.MaxLegs and Deps.MaxGross.
func TestConfiguredBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(d *app.Parts) {
		d.Rules.MaxLegs, d.Rules.MaxGross = 2, map[string]amount.Amount{"BTC": amount.MustStored("2")}
	})
	instruct := func(req *interchangev1.CreateSettlementRequest) error {
		_, err := f.engine.InstructSettlement(engineCtx(), &interchangev1.InstructSettlementRequest{CompanyId: ztest, Instruction: req})
		return err
	}
	_, err := f.svc.CreateSettlement(f.venueCtx(), btcLegs("B-1", "0.5", "0.5", "0.5"))
	wantAppErr(t, err, "ER-103", "settlements")
	wantAppErr(t, instruct(btcLegs("B-2", "1.5", "-1")), "ER-103", "settlements")
	wantAppErr(t, instruct(instruction("B-3", []*interchangev1.Settlement{leg(ethWallet, "ETH", "ETH", "1")})), "ER-103", "settlements")
	if err := instruct(btcLegs("B-4", "1.5", "-0.5")); err != nil {
		t.Errorf("a settlement at the bounds: %v", err)
	}
}
