package settlement_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/interchange/settlement"
)

func wantAppErr(t *testing.T, err error, code, field string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want %s on %s", err, code, field)
	}
	if ae.Code != code || ae.Field != field {
		t.Errorf("err = %s on %q (%s), want %s on %q", ae.Code, ae.Field, ae.Message, code, field)
	}
	if !strings.Contains(ae.Message, field) && ae.Code != apperr.CodeNotFound && field != "" {
		t.Errorf("message %q does not name the field %s", ae.Message, field)
	}
}

func valid() *interchangev1.CreateSettlementRequest {
	req := instruction("REQ-1", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5"), leg(ethWallet, "ETH", "ETH", "20")},
		&interchangev1.NetSettlement{Currency: "ETH", Ledger: "ETH", Amount: "-20"})
	req.Header.ReceivableAddresses = []*interchangev1.ReceivableAddress{{Address: "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", Ledger: "XRP", DestinationTag: 2147483647, Memo: "m"}}
	req.Settlements[0].ExternalSettlementId = "EXT-1"
	req.Settlements[0].ExecutionDate = "2026-11-21"
	return req
}

func TestParseInstructionRefuses(t *testing.T) {
	t.Parallel()
	with := func(f func(r *interchangev1.CreateSettlementRequest)) *interchangev1.CreateSettlementRequest {
		r := proto.Clone(valid()).(*interchangev1.CreateSettlementRequest)
		f(r)
		return r
	}
	tests := []struct {
		name      string
		give      *interchangev1.CreateSettlementRequest
		wantCode  string
		wantField string
	}{
		{"no header", with(func(r *interchangev1.CreateSettlementRequest) { r.Header = nil }), "ER-101", "header"},
		{"no venue", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.VenueId = "" }), "ER-101", "header.venueId"},
		{"venue format", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.VenueId = "by bit" }), "ER-108", "header.venueId"},
		{"no request id", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.SettlementRequestId = "" }), "ER-101", "header.settlementRequestId"},
		{"long request id", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.SettlementRequestId = strings.Repeat("R", 65) }), "ER-103", "header.settlementRequestId"},
		{"request id format", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.SettlementRequestId = "R:1" }), "ER-108", "header.settlementRequestId"},
		{"header status", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.Status = "SETTLEMENT_COMPLETE" }), "ER-108", "header.status"},
		{"header errors", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.Errors = strings.Repeat("e", 1025) }), "ER-103", "header.errors"},
		{"request time", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.RequestDateTime = "21/11/2026" }), "ER-108", "header.requestDateTime"},
		{"address missing", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.ReceivableAddresses[0].Address = "" }), "ER-101", "header.receivableAddresses[0].address"},
		{"address ledger", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.ReceivableAddresses[0].Ledger = "DOGE" }), "ER-108", "header.receivableAddresses[0].ledger"},
		{"address format", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.ReceivableAddresses[0].Ledger = "BTC" }), "ER-108", "header.receivableAddresses[0].address"},
		{"tag too big", with(func(r *interchangev1.CreateSettlementRequest) {
			r.Header.ReceivableAddresses[0].DestinationTag = 2147483648
		}), "ER-103", "header.receivableAddresses[0].destinationTag"},
		{"tag negative", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.ReceivableAddresses[0].DestinationTag = -1 }), "ER-103", "header.receivableAddresses[0].destinationTag"},
		{"memo", with(func(r *interchangev1.CreateSettlementRequest) {
			r.Header.ReceivableAddresses[0].Memo = strings.Repeat("m", 129)
		}), "ER-103", "header.receivableAddresses[0].memo"},
		{"no settlements", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements, r.NetSettlements = nil, nil }), "ER-112", "settlements"},
		{"count", with(func(r *interchangev1.CreateSettlementRequest) { r.Header.InstructionCount = 3 }), "ER-108", "header.instructionCount"},
		{"no counterparty", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[1].Counterparty = nil }), "ER-101", "settlements[1].counterparty"},
		{"counterparty type", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Counterparty.Type = "IBAN" }), "ER-108", "settlements[0].counterparty.type"},
		{"counterparty value", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Counterparty.Value = "" }), "ER-101", "settlements[0].counterparty.value"},
		{"no currency", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Currency = "" }), "ER-101", "settlements[0].currency"},
		{"unsupported currency", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Currency = "DOGE" }), "ER-111", "settlements[0].currency"},
		{"no ledger", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Ledger = "" }), "ER-101", "settlements[0].ledger"},
		{"inconsistent ledger", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Ledger = "ETH" }), "ER-108", "settlements[0].ledger"},
		{"no amount", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "" }), "ER-101", "settlements[0].amount"},
		{"zero amount", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "0" }), "ER-108", "settlements[0].amount"},
		{"negative amount", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "-1" }), "ER-108", "settlements[0].amount"},
		{"not canonical", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "1.50" }), "ER-108", "settlements[0].amount"},
		{"exponent", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "1e2" }), "ER-108", "settlements[0].amount"},
		{"below a satoshi", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "0.000000001" }), "ER-108", "settlements[0].amount"},
		{"external id twice", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[1].ExternalSettlementId = "EXT-1" }), "ER-108", "settlements[1].externalSettlementId"},
		{"execution date", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].ExecutionDate = "tomorrow" }), "ER-108", "settlements[0].executionDate"},
		{"net currency", with(func(r *interchangev1.CreateSettlementRequest) {
			r.NetSettlements[0].Currency = "XLM"
			r.NetSettlements[0].Ledger = "XLM"
		}), "ER-108", "netSettlements[0].currency"},
		{"net unsupported", with(func(r *interchangev1.CreateSettlementRequest) { r.NetSettlements[0].Currency = "DOGE" }), "ER-111", "netSettlements[0].currency"},
		{"net ledger", with(func(r *interchangev1.CreateSettlementRequest) { r.NetSettlements[0].Ledger = "BTC" }), "ER-108", "netSettlements[0].ledger"},
		{"net amount", with(func(r *interchangev1.CreateSettlementRequest) { r.NetSettlements[0].Amount = "-0" }), "ER-108", "netSettlements[0].amount"},
		{"net above gross", with(func(r *interchangev1.CreateSettlementRequest) { r.NetSettlements[0].Amount = "-20.1" }), "ER-108", "netSettlements[0].amount"},
		{"net twice", with(func(r *interchangev1.CreateSettlementRequest) {
			r.NetSettlements = append(r.NetSettlements, &interchangev1.NetSettlement{Currency: "ETH", Ledger: "ETH", Amount: "1"})
		}), "ER-108", "netSettlements[1].currency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := settlement.ParseInstruction(ztest, tt.give)
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
}

func TestObligations(t *testing.T) {
	t.Parallel()
	req := instruction("R", []*interchangev1.Settlement{
		leg(btcWallet, "BTC", "BTC", "1.5"), leg(ethWallet, "ETH", "ETH", "20"), leg(ethWallet, "ETH", "ETH", "5.5"),
		leg(btcWallet, "BTC", "BTC", "0.25"), leg("ZTEST-TW-USDC000001", "USDC", "XLM", "3")},
		&interchangev1.NetSettlement{Currency: "ETH", Ledger: "ETH", Amount: "-14.5"},
		&interchangev1.NetSettlement{Currency: "USDC", Ledger: "XLM", Amount: "0"})
	got, err := settlement.ParseInstruction(ztest, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []settlement.Obligation{
		{Key: "net-ETH", WalletID: ethWallet, Currency: "ETH", Amount: "14.5", Direction: settlement.DirectionOut},
		{Key: "leg1", WalletID: btcWallet, Currency: "BTC", Amount: "1.5", Direction: settlement.DirectionIn},
		{Key: "leg4", WalletID: btcWallet, Currency: "BTC", Amount: "0.25", Direction: settlement.DirectionIn},
	}
	if diff := cmp.Diff(want, got.Obligations); diff != "" {
		t.Errorf("obligations diff (-want +got):\n%s", diff)
	}
	split := proto.Clone(req).(*interchangev1.CreateSettlementRequest)
	split.Settlements[2].Counterparty.Value = "ZTEST-TW-ETH0000002"
	_, err = settlement.ParseInstruction(ztest, split)
	wantAppErr(t, err, "ER-108", "netSettlements[0].currency")
}

func TestBodyHashIgnoresNothingThatMatters(t *testing.T) {
	t.Parallel()
	a, err := settlement.ParseInstruction(ztest, valid())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := settlement.ParseInstruction(ztest, valid())
	changed := valid()
	changed.Settlements[0].Amount = "1.6"
	c, _ := settlement.ParseInstruction(ztest, changed)
	if a.BodyHash != b.BodyHash || a.BodyHash == c.BodyHash {
		t.Errorf("hashes %s %s %s: want the same body to hash the same and another body not", a.BodyHash, b.BodyHash, c.BodyHash)
	}
}
