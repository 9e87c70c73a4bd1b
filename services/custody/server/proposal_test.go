package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/apperr"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
)

// TestProposalSignApprove: the proposal extension hands the calling CHECKER exactly the object
// endpoint 4 verifies; signed as is, it approves the wallet.
func TestProposalSignApprove(t *testing.T) {
	t.Parallel()
	f := newActionFixture(t)
	w := f.propose(t, company)
	got, err := f.srv.GetLegacyWalletProposal(userContext(company, f.checker().Email, "CHECKER"), &custodyv1.GetLegacyWalletProposalRequest{WalletId: w.ID})
	if err != nil {
		t.Fatal(err)
	}
	if want := action(f.checker(), w, custody.ActionApprove); !proto.Equal(got.GetRequest(), want) {
		t.Errorf("request %v, want %v", got.GetRequest(), want)
	}
	if got.GetWalletId() != w.ID || got.GetStatus() != custody.StatusPendingAuth || got.GetCreatedBy() != maker || got.GetCurrencyId() != "eth-eth" {
		t.Errorf("proposal %v, want wallet %s PENDING_AUTH proposed by %s", got, w.ID, maker)
	}
	if _, err := f.srv.ActOnLegacyWallet(userContext(company, f.checker().Email, "CHECKER"), signed(t, w, got.GetRequest(), f.checker().key)); err != nil {
		t.Fatalf("approve with the proposal's object: %v", err)
	}
	// Decided: nothing awaits approval any more.
	_, err = f.srv.GetLegacyWalletProposal(userContext(company, f.checker().Email, "CHECKER"), &custodyv1.GetLegacyWalletProposalRequest{WalletId: w.ID})
	checkErr(t, err, wantErr{codes.FailedPrecondition, apperr.CodeConflict, "walletId"})
}

func TestProposalRefuses(t *testing.T) {
	t.Parallel()
	f := newActionFixture(t)
	w := f.propose(t, company)
	tests := []struct {
		name string
		ctx  context.Context
		id   string
		want wantErr
	}{
		{name: "the company key names no author", ctx: companyContext(company), id: w.ID, want: wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""}},
		{name: "the proposer (four eyes)", ctx: userContext(company, maker, "MAKER"), id: w.ID, want: wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""}},
		{name: "another company's wallet", ctx: userContext("ZACME", f.otherChecker().Email, "CHECKER"), id: w.ID, want: wantErr{codes.NotFound, apperr.CodeNotFound, "walletId"}},
		{name: "an unknown wallet", ctx: userContext(company, f.checker().Email, "CHECKER"), id: "ZTEST-NOPE", want: wantErr{codes.NotFound, apperr.CodeNotFound, "walletId"}},
		{name: "a user the directory does not know", ctx: userContext(company, "ghost@ztest.example", "CHECKER"), id: w.ID, want: wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := f.srv.GetLegacyWalletProposal(tt.ctx, &custodyv1.GetLegacyWalletProposalRequest{WalletId: tt.id})
			checkErr(t, err, tt.want)
		})
	}
}
