package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/apperr"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/amount"
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

// valid is a client's instruction (receivables only): BTC 1.5 leg by leg, ETH 20 netted.
func valid() *interchangev1.CreateSettlementRequest {
	req := instruction("REQ-1", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5"), leg(ethWallet, "ETH", "ETH", "20")},
		&interchangev1.NetSettlement{Currency: "ETH", Ledger: "ETH", Amount: "20"})
	req.Header.ReceivableAddresses = []*interchangev1.ReceivableAddress{{Address: "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", Ledger: "XRP", DestinationTag: 2147483647, Memo: "m"}}
	req.Settlements[0].ExternalSettlementId = "EXT-1"
	req.Settlements[0].ExecutionDate = "2026-11-21"
	return req
}

// defaultRules are endpoint 3's default bounds.
func defaultRules() settlement.Rules {
	return settlement.Rules{MaxLegs: settlement.DefaultMaxLegs, MaxGross: settlement.DefaultMaxGross()}
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
		{"negative zero", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "-0" }), "ER-108", "settlements[0].amount"},
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
		{"net above the sum", with(func(r *interchangev1.CreateSettlementRequest) { r.NetSettlements[0].Amount = "20.1" }), "ER-108", "netSettlements[0].amount"},
		{"net below the sum", with(func(r *interchangev1.CreateSettlementRequest) { r.NetSettlements[0].Amount = "19.999" }), "ER-108", "netSettlements[0].amount"},
		{"net of the other sign", with(func(r *interchangev1.CreateSettlementRequest) { r.NetSettlements[0].Amount = "-20" }), "ER-108", "netSettlements[0].amount"},
		{"net finer than the currency", with(func(r *interchangev1.CreateSettlementRequest) {
			r.NetSettlements[0].Amount = "20.0000000000000000001"
		}), "ER-108", "netSettlements[0].amount"},
		{"net on another ledger than its legs", with(func(r *interchangev1.CreateSettlementRequest) {
			r.Settlements = append(r.Settlements, leg(usdcWallet, "USDC", "XLM", "1"))
			r.Header.InstructionCount = 3
			r.NetSettlements = []*interchangev1.NetSettlement{{Currency: "USDC", Ledger: "ETH", Amount: "1"}}
		}), "ER-108", "netSettlements[0].ledger"},
		{"gross beyond its bound", with(func(r *interchangev1.CreateSettlementRequest) { r.Settlements[0].Amount = "10000.00000001" }), "ER-103", "settlements"},
		{"net twice", with(func(r *interchangev1.CreateSettlementRequest) {
			r.NetSettlements = append(r.NetSettlements, &interchangev1.NetSettlement{Currency: "ETH", Ledger: "ETH", Amount: "1"})
		}), "ER-108", "netSettlements[1].currency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := server.ParseInstruction(ztest, tt.give, defaultRules())
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
}

// TestShares: who pays into a settlement and who is paid out of it. Without a net each leg
// settles on its own against the venue's settlement wallet; with one, each wallet's legs net
// to one amount and the venue pays or receives only the net. Per currency the payers'
// amounts equal the payees'.
func TestShares(t *testing.T) {
	t.Parallel()
	payer := func(wallet, currency, a string) settlement.Share {
		return settlement.Share{Role: settlement.RolePayer, CompanyID: companyOf(wallet), WalletID: wallet, Currency: currency, Amount: a}
	}
	payee := func(wallet, currency, a string) settlement.Share {
		return settlement.Share{Role: settlement.RolePayee, CompanyID: companyOf(wallet), WalletID: wallet, Currency: currency, Amount: a}
	}
	btcNet := func(a string) *interchangev1.NetSettlement {
		return &interchangev1.NetSettlement{Currency: "BTC", Ledger: "BTC", Amount: a}
	}
	tests := []struct {
		name string
		legs []*interchangev1.Settlement
		nets []*interchangev1.NetSettlement
		want []settlement.Share
	}{
		{"a receivable", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5")}, nil,
			[]settlement.Share{payer(btcWallet, "BTC", "1.5"), payee(venueBTC, "BTC", "1.5")}},
		{"a payable", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "-1.5")}, nil,
			[]settlement.Share{payer(venueBTC, "BTC", "1.5"), payee(btcWallet, "BTC", "1.5")}},
		{"legs settled one by one are not netted", []*interchangev1.Settlement{
			leg(btcWallet, "BTC", "BTC", "1.5"), leg(btcWallet, "BTC", "BTC", "0.25"), leg(btcWallet, "BTC", "BTC", "-0.5")}, nil,
			[]settlement.Share{payer(btcWallet, "BTC", "1.75"), payer(venueBTC, "BTC", "0.5"), payee(btcWallet, "BTC", "0.5"), payee(venueBTC, "BTC", "1.75")}},
		{"a wallet's legs netted", []*interchangev1.Settlement{
			leg(ethWallet, "ETH", "ETH", "-20"), leg(ethWallet, "ETH", "ETH", "5.5")},
			[]*interchangev1.NetSettlement{{Currency: "ETH", Ledger: "ETH", Amount: "-14.5"}},
			[]settlement.Share{payer(venueETH, "ETH", "14.5"), payee(ethWallet, "ETH", "14.5")}},
		{"two wallets netted, the venue pays", []*interchangev1.Settlement{
			leg(btcWallet, "BTC", "BTC", "0.5"), leg(btcWallet2, "BTC", "BTC", "-2")}, []*interchangev1.NetSettlement{btcNet("-1.5")},
			[]settlement.Share{payer(btcWallet, "BTC", "0.5"), payer(venueBTC, "BTC", "1.5"), payee(btcWallet2, "BTC", "2")}},
		{"two wallets netted, the venue receives", []*interchangev1.Settlement{
			leg(btcWallet, "BTC", "BTC", "2"), leg(btcWallet2, "BTC", "BTC", "-0.5")}, []*interchangev1.NetSettlement{btcNet("1.5")},
			[]settlement.Share{payer(btcWallet, "BTC", "2"), payee(btcWallet2, "BTC", "0.5"), payee(venueBTC, "BTC", "1.5")}},
		{"a net of zero between two wallets", []*interchangev1.Settlement{
			leg(btcWallet, "BTC", "BTC", "1"), leg(btcWallet2, "BTC", "BTC", "-1")}, []*interchangev1.NetSettlement{btcNet("0")},
			[]settlement.Share{payer(btcWallet, "BTC", "1"), payee(btcWallet2, "BTC", "1")}},
		{"legs that cancel out move nothing", []*interchangev1.Settlement{
			leg(btcWallet, "BTC", "BTC", "1"), leg(btcWallet, "BTC", "BTC", "-1")}, []*interchangev1.NetSettlement{btcNet("0")}, nil},
		{"one currency netted, another not", []*interchangev1.Settlement{
			leg(btcWallet, "BTC", "BTC", "0.1"), leg(ethWallet, "ETH", "ETH", "-3"), leg(ethWallet, "ETH", "ETH", "1")},
			[]*interchangev1.NetSettlement{{Currency: "ETH", Ledger: "ETH", Amount: "-2"}},
			[]settlement.Share{payer(btcWallet, "BTC", "0.1"), payee(venueBTC, "BTC", "0.1"), payer(venueETH, "ETH", "2"), payee(ethWallet, "ETH", "2")}},
	}
	byKey := cmpopts.SortSlices(func(a, b settlement.Share) bool {
		return a.Role+a.Currency+a.WalletID < b.Role+b.Currency+b.WalletID
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := server.ParseInstruction(ztest, instruction("R", tt.legs, tt.nets...), defaultRules())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Shares, byKey, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
			balance := map[string]amount.Amount{}
			for _, sh := range got.Shares {
				a := amount.MustStored(sh.Amount)
				if a.Sign() <= 0 {
					t.Errorf("share %+v is not positive", sh)
				}
				if sh.Role == settlement.RolePayee {
					a = a.Neg()
				}
				balance[sh.Currency] = balance[sh.Currency].Add(a)
			}
			for cur, b := range balance {
				if !b.IsZero() {
					t.Errorf("%s payers and payees differ by %s", cur, b)
				}
			}
		})
	}
}

// companyOf is the company of a test wallet: the venue's for its settlement wallets.
// companyOf is the company a parsed instruction's share names: the venue's for its
// settlement wallet, none yet for a client's (Create names it from the wallet as read).
func companyOf(wallet string) string {
	if strings.HasPrefix(wallet, venue+"-ISW-") {
		return venueCompany
	}
	return ""
}

// btcLegs is an instruction of one BTC leg on btcWallet per amount.
func btcLegs(requestID string, amounts ...string) *interchangev1.CreateSettlementRequest {
	legs := make([]*interchangev1.Settlement, 0, len(amounts))
	for _, a := range amounts {
		legs = append(legs, leg(btcWallet, "BTC", "BTC", a))
	}
	return instruction(requestID, legs)
}

// TestRules: endpoint 3 holds receivables only; legs per settlement and the gross amount
// per currency are bounded (ER-103), a currency without a bound refused.
func TestRules(t *testing.T) {
	t.Parallel()
	btc := func(amounts ...string) *interchangev1.CreateSettlementRequest { return btcLegs("R", amounts...) }
	many := make([]string, settlement.DefaultMaxLegs+1)
	for i := range many {
		many[i] = "0.00000001"
	}
	small := settlement.Rules{MaxLegs: 2, MaxGross: map[string]amount.Amount{"BTC": amount.MustStored("2")}}
	tests := []struct {
		name      string
		give      *interchangev1.CreateSettlementRequest
		rules     settlement.Rules
		wantCode  string
		wantField string
	}{
		{"a payable", btc("1", "-0.5"), defaultRules(), "", ""},
		{"legs at the default bound", btc(many[1:]...), defaultRules(), "", ""},
		{"legs beyond the default bound", btc(many...), defaultRules(), "ER-103", "settlements"},
		{"legs beyond the bound", btc("1", "0.5", "0.25"), small, "ER-103", "settlements"},
		{"gross at the bound", btc("1.5", "-0.5"), small, "", ""},
		{"gross beyond the bound, net within", btc("1.5", "-0.50000001"), small, "ER-103", "settlements"},
		{"a currency without a bound", instruction("R", []*interchangev1.Settlement{leg(ethWallet, "ETH", "ETH", "1")}), small, "ER-103", "settlements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := server.ParseInstruction(ztest, tt.give, tt.rules)
			if tt.wantCode == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
}

func TestBodyHashIgnoresNothingThatMatters(t *testing.T) {
	t.Parallel()
	a, err := server.ParseInstruction(ztest, valid(), defaultRules())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := server.ParseInstruction(ztest, valid(), defaultRules())
	changed := valid()
	changed.Settlements[0].Amount = "1.6"
	c, _ := server.ParseInstruction(ztest, changed, defaultRules())
	if a.BodyHash != b.BodyHash || a.BodyHash == c.BodyHash {
		t.Errorf("hashes %s %s %s: want the same body to hash the same and another body not", a.BodyHash, b.BodyHash, c.BodyHash)
	}
}
