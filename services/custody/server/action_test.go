package server_test

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
)

func TestActOnLegacyWallet(t *testing.T) {
	t.Parallel()
	f := newActionFixture(t)
	tests := []struct {
		typ        string
		wantStatus string
		wantValid  bool
	}{
		{custody.ActionApprove, custody.StatusActive, true},
		{custody.ActionReject, custody.StatusRejected, false},
	}
	for _, tt := range tests {
		w := f.propose(t, company)
		req := signed(t, w, action(f.checker(), w, tt.typ), f.checker().key)
		got, err := f.srv.ActOnLegacyWallet(companyContext(company), req)
		if err != nil {
			t.Fatalf("%s: %v", tt.typ, err)
		}
		if got.GetId() != w.ID {
			t.Errorf("%s: id %q, want %s", tt.typ, got.GetId(), w.ID)
		}
		after, err := f.store.Wallet(context.Background(), company, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		d := after.Intent.Decision
		if after.Status != tt.wantStatus || after.Valid != tt.wantValid || d == nil || d.Type != tt.typ || d.AuthorEmail != f.checker().Email {
			t.Errorf("%s: wallet %s valid %t decision %+v; want %s valid %t decided by the checker", tt.typ, after.Status, after.Valid, d, tt.wantStatus, tt.wantValid)
		}
		// Acting twice, or replaying the same signed body, is a conflict.
		_, err = f.srv.ActOnLegacyWallet(companyContext(company), req)
		checkErr(t, err, wantErr{codes.Aborted, apperr.CodeConflict, ""})
	}
}

func TestActOnLegacyWalletRefuses(t *testing.T) {
	t.Parallel()
	f := newActionFixture(t)
	w, other, theirs := f.propose(t, company), f.propose(t, company), f.propose(t, "ZACME")
	checker := f.checker()
	good := func() *custodyv1.WalletActionRequest { return action(checker, w, custody.ActionApprove) }
	with := func(change func(*custodyv1.WalletActionRequest)) *custodyv1.WalletActionRequest {
		r := good()
		change(r)
		return r
	}
	forged := signed(t, w, good(), checker.key)
	forged.Request.Type = custody.ActionReject // changed after signing
	zacme := f.otherChecker()
	tests := []struct {
		name string
		ctx  context.Context
		give *custodyv1.ActOnLegacyWalletRequest
		want wantErr
	}{
		{"system caller", systemContext("settlement-engine"), signed(t, w, good(), checker.key), wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""}},
		{"no request", companyContext(company), &custodyv1.ActOnLegacyWalletRequest{WalletId: w.ID, Signature: "x"}, wantErr{codes.InvalidArgument, "ER-101", "request"}},
		{"no signature", companyContext(company), &custodyv1.ActOnLegacyWalletRequest{WalletId: w.ID, Request: good()}, wantErr{codes.InvalidArgument, "ER-101", "signature"}},
		{"bad type", companyContext(company), signed(t, w, with(func(r *custodyv1.WalletActionRequest) { r.Type = "Propose" }), checker.key),
			wantErr{codes.InvalidArgument, "ER-108", "request.type"}},
		{"unknown wallet", companyContext(company), signed(t, custody.Wallet{ID: "ZTEST-NOBENF-NONE"}, good(), checker.key), wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"other company's wallet", companyContext(company), signed(t, theirs, action(checker, theirs, custody.ActionApprove), checker.key), wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"forged", companyContext(company), forged, wantErr{codes.PermissionDenied, apperr.CodeForbidden, "signature"}},
		{"wrong key", companyContext(company), signed(t, w, good(), f.maker().key), wantErr{codes.PermissionDenied, apperr.CodeForbidden, "signature"}},
		{"unknown author", companyContext(company), signed(t, w, with(func(r *custodyv1.WalletActionRequest) { r.Author.Id = "44444444-4444-4444-8444-444444444444" }), checker.key),
			wantErr{codes.InvalidArgument, "ER-114", "request.author.id"}},
		{"author of another company", companyContext(company), signed(t, w, action(zacme, w, custody.ActionApprove), zacme.key),
			wantErr{codes.InvalidArgument, "ER-114", "request.author.id"}},
		{"author domain of another company", companyContext(company), signed(t, w, with(func(r *custodyv1.WalletActionRequest) { r.Author.DomainId = domainZACME }), checker.key),
			wantErr{codes.InvalidArgument, "ER-114", "request.author.domainId"}},
		{"target domain of another company", companyContext(company), signed(t, w, with(func(r *custodyv1.WalletActionRequest) { r.TargetDomainId = domainZACME }), checker.key),
			wantErr{codes.InvalidArgument, "ER-114", "request.targetDomainId"}},
		{"maker as author", companyContext(company), signed(t, w, action(f.maker(), w, custody.ActionApprove), f.maker().key), wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""}},
		{"submitter other than the author", userContext(company, "api-viewer@ztest.example", principal.RoleViewer), signed(t, w, good(), checker.key),
			wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""}},
		{"intent of another wallet", companyContext(company), signed(t, w, action(checker, other, custody.ActionApprove), checker.key), wantErr{codes.Aborted, "ER-409", ""}},
		{"other proposal signature", companyContext(company), signed(t, w, with(func(r *custodyv1.WalletActionRequest) { r.ProposalSignature = "AAAA" }), checker.key),
			wantErr{codes.Aborted, "ER-409", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.srv.ActOnLegacyWallet(tt.ctx, tt.give)
			checkErr(t, err, tt.want)
		})
	}
	for _, id := range []string{w.ID, other.ID} {
		if got, err := f.store.Wallet(context.Background(), company, id); err != nil || got.Status != custody.StatusPendingAuth || got.Version != 1 {
			t.Errorf("after refused actions wallet %s is %s at version %d (%v), want untouched", id, got.Status, got.Version, err)
		}
	}
	// The author may send the call as themselves.
	if _, err := f.srv.ActOnLegacyWallet(userContext(company, checker.Email, principal.RoleChecker), signed(t, w, good(), checker.key)); err != nil {
		t.Errorf("the author as submitter: %v", err)
	}
}

func TestActOnLegacyWalletWithoutDirectory(t *testing.T) {
	t.Parallel()
	f := newActionFixture(t)
	w := f.propose(t, company)
	srv := server.New(f.store, server.Options{})
	_, err := srv.ActOnLegacyWallet(companyContext(company), signed(t, w, action(f.checker(), w, custody.ActionApprove), f.checker().key))
	checkErr(t, err, wantErr{codes.Unavailable, apperr.CodeUnavailable, ""})
}

func TestConcurrentActionsOneWins(t *testing.T) {
	t.Parallel()
	f := newActionFixture(t)
	w := f.propose(t, company)
	errs := make([]error, 20)
	var wg sync.WaitGroup
	for i := range errs {
		typ := custody.ActionApprove
		if i%2 == 1 {
			typ = custody.ActionReject
		}
		req := signed(t, w, action(f.checker(), w, typ), f.checker().key)
		wg.Go(func() { _, errs[i] = f.srv.ActOnLegacyWallet(companyContext(company), req) })
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		checkErr(t, err, wantErr{codes.Aborted, apperr.CodeConflict, ""})
	}
	if wins != 1 {
		t.Errorf("%d actions succeeded, want exactly one", wins)
	}
}
