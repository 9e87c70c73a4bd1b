package custody_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/services/custody"
)

func TestPropose(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 6, 1, 8, 0, 0, 123_456_789, time.UTC)
	p := custody.Proposal{CompanyID: "ZTEST", CreatedBy: "api-maker@ztest.example", Name: "New Treasury", CurrencyID: "eth-eth", At: at}
	w, err := custody.Propose(p)
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != custody.StatusPendingAuth || w.Valid || w.Version != 1 || w.CompanyID != "ZTEST" || w.Name != "New Treasury" ||
		w.CreatedBy != p.CreatedBy || w.Blockchain != "ETH" || len(w.AssetBalances) != 1 || w.AssetBalances[0].AvailableBalance != "0" {
		t.Errorf("Propose() = %+v, want an empty ETH wallet PENDING_AUTH, not valid, at version 1", w)
	}
	if err := custody.CheckReservedID(w.ID, "ZTEST", ""); err != nil {
		t.Errorf("wallet id %s: %v", w.ID, err)
	}
	if w.Intent == nil || uuid.Validate(w.Intent.ID) != nil || w.Intent.Decision != nil || !w.CreatedAt.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("intent %+v, created %s: want a fresh unused UUID intent, time to the millisecond", w.Intent, w.CreatedAt)
	}
	if sig, _ := custody.ProposalSignature(w); sig != w.Intent.ProposalSignature || sig == "" {
		t.Errorf("proposal signature %q, recomputed %q", w.Intent.ProposalSignature, sig)
	}
	other, err := custody.Propose(p)
	if err != nil {
		t.Fatal(err)
	}
	if other.ID == w.ID || other.Intent.ID == w.Intent.ID || other.Intent.ProposalSignature == w.Intent.ProposalSignature {
		t.Errorf("two proposals share an id, intent or proposal signature: %+v %+v", w.Intent, other.Intent)
	}
}

func TestProposalSignatureCoversTheProposal(t *testing.T) {
	t.Parallel()
	base, err := custody.Pending(custody.Wallet{ID: "ZTEST-NOBENF-A", Name: "N", CompanyID: "ZTEST", CreatedBy: "m@z", CurrencyID: "btc-btc",
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, "11111111-1111-4111-8111-111111111111")
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]func(*custody.Wallet){
		"id":       func(w *custody.Wallet) { w.ID = "ZTEST-NOBENF-B" },
		"name":     func(w *custody.Wallet) { w.Name = "M" },
		"company":  func(w *custody.Wallet) { w.CompanyID = "ZACME" },
		"creator":  func(w *custody.Wallet) { w.CreatedBy = "x@z" },
		"currency": func(w *custody.Wallet) { w.CurrencyID = "eth-eth" },
		"time":     func(w *custody.Wallet) { w.CreatedAt = w.CreatedAt.Add(time.Millisecond) },
		"intent":   func(w *custody.Wallet) { w.Intent = &custody.Intent{ID: "22222222-2222-4222-8222-222222222222"} },
	}
	for name, change := range changes {
		w := base
		change(&w)
		if sig, _ := custody.ProposalSignature(w); sig == base.Intent.ProposalSignature {
			t.Errorf("changing the %s leaves the proposal signature unchanged", name)
		}
	}
}

func TestProposeRefuses(t *testing.T) {
	t.Parallel()
	valid := custody.Proposal{CompanyID: "ZTEST", CreatedBy: "api-maker@ztest.example", Name: "Treasury", CurrencyID: "btc-btc"}
	tests := []struct {
		name    string
		change  func(*custody.Proposal)
		wantErr wantErr
	}{
		{"no company", func(p *custody.Proposal) { p.CompanyID = "" }, wantErr{"ER-101", "companyId"}},
		{"lower-case company", func(p *custody.Proposal) { p.CompanyID = "ztest" }, wantErr{"ER-108", "companyId"}},
		{"company too long", func(p *custody.Proposal) { p.CompanyID = "ABCDEFGHIJKLM" }, wantErr{"ER-108", "companyId"}},
		{"no creator", func(p *custody.Proposal) { p.CreatedBy = " " }, wantErr{"ER-101", "createdBy"}},
		{"creator not an e-mail", func(p *custody.Proposal) { p.CreatedBy = "maker" }, wantErr{"ER-108", "createdBy"}},
		{"no currency", func(p *custody.Proposal) { p.CurrencyID = "" }, wantErr{"ER-101", "currencyId"}},
		{"unsupported currency", func(p *custody.Proposal) { p.CurrencyID = "doge-doge" }, wantErr{"ER-111", "currencyId"}},
		{"no name", func(p *custody.Proposal) { p.Name = "" }, wantErr{"ER-103", "name"}},
		{"bad name", func(p *custody.Proposal) { p.Name = "Treasury!" }, wantErr{"ER-108", "name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := valid
			tt.change(&p)
			_, err := custody.Propose(p)
			checkErr(t, err, tt.wantErr)
		})
	}
}
