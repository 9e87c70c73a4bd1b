package custody_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
	"github.com/zcustody/suite/services/custody"
)

const (
	domainZT  = "7d7a1c9e-1f3b-4c2a-9d8e-0a1b2c3d4e5f"
	domainZA  = "8e8b2d0f-2a4c-4d3b-8e9f-1b2c3d4e5f60"
	checkerID = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
	intentID  = "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
)

func validAction() custody.Action {
	return custody.Action{AuthorID: checkerID, AuthorDomainID: domainZT, TargetDomainID: domainZT,
		IntentID: intentID, ProposalSignature: "PROPOSAL", Type: custody.ActionApprove}
}

func TestActionCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(*custody.Action)
		wantErr wantErr
	}{
		{"approve", func(*custody.Action) {}, wantErr{}},
		{"reject", func(a *custody.Action) { a.Type = custody.ActionReject }, wantErr{}},
		{"no author id", func(a *custody.Action) { a.AuthorID = "" }, wantErr{"ER-101", "request.author.id"}},
		{"no author domain", func(a *custody.Action) { a.AuthorDomainID = "" }, wantErr{"ER-101", "request.author.domainId"}},
		{"no target domain", func(a *custody.Action) { a.TargetDomainID = "" }, wantErr{"ER-101", "request.targetDomainId"}},
		{"no intent", func(a *custody.Action) { a.IntentID = "" }, wantErr{"ER-101", "request.intentId"}},
		{"no proposal signature", func(a *custody.Action) { a.ProposalSignature = "" }, wantErr{"ER-101", "request.proposalSignature"}},
		{"no type", func(a *custody.Action) { a.Type = "" }, wantErr{"ER-101", "request.type"}},
		{"author id not a UUID", func(a *custody.Action) { a.AuthorID = "api-checker@ztest.example" }, wantErr{"ER-108", "request.author.id"}},
		{"domain a company code", func(a *custody.Action) { a.TargetDomainID = "ZTEST" }, wantErr{"ER-108", "request.targetDomainId"}},
		{"intent in braces", func(a *custody.Action) { a.IntentID = "{" + intentID + "}" }, wantErr{"ER-108", "request.intentId"}},
		{"lower-case type", func(a *custody.Action) { a.Type = "approve" }, wantErr{"ER-108", "request.type"}},
		{"other type", func(a *custody.Action) { a.Type = "Propose" }, wantErr{"ER-108", "request.type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := validAction()
			tt.change(&a)
			checkErr(t, a.Check(), tt.wantErr)
		})
	}
}

func TestAuthorize(t *testing.T) {
	t.Parallel()
	w := custody.Wallet{ID: "ZTEST-NOBENF-P", CompanyID: "ZTEST", CreatedBy: "api-maker@ztest.example"}
	checker := custody.Author{ID: checkerID, Email: "api-checker@ztest.example", CompanyID: "ZTEST", DomainID: domainZT, Roles: []string{"CHECKER"}, Active: true}
	tests := []struct {
		name    string
		author  func(*custody.Author)
		action  func(*custody.Action)
		wantErr wantErr
	}{
		{name: "checker of the company"},
		{name: "maker and checker who did not propose", author: func(a *custody.Author) { a.Roles = []string{"MAKER", "CHECKER"} }},
		{name: "user of another company", author: func(a *custody.Author) { a.CompanyID, a.DomainID = "ZACME", domainZA },
			action: func(a *custody.Action) { a.AuthorDomainID = domainZA }, wantErr: wantErr{"ER-114", "request.author.id"}},
		{name: "author domain of another company", action: func(a *custody.Action) { a.AuthorDomainID = domainZA }, wantErr: wantErr{"ER-114", "request.author.domainId"}},
		{name: "target domain of another company", action: func(a *custody.Action) { a.TargetDomainID = domainZA }, wantErr: wantErr{"ER-114", "request.targetDomainId"}},
		{name: "inactive", author: func(a *custody.Author) { a.Active = false }, wantErr: wantErr{"ER-403", ""}},
		{name: "maker only", author: func(a *custody.Author) { a.Roles = []string{"MAKER"} }, wantErr: wantErr{"ER-403", ""}},
		{name: "viewer", author: func(a *custody.Author) { a.Roles = []string{"VIEWER"} }, wantErr: wantErr{"ER-403", ""}},
		{name: "the proposer", author: func(a *custody.Author) { a.Email, a.Roles = w.CreatedBy, []string{"MAKER", "CHECKER"} }, wantErr: wantErr{"ER-403", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			author, action := checker, validAction()
			if tt.author != nil {
				tt.author(&author)
			}
			if tt.action != nil {
				tt.action(&action)
			}
			checkErr(t, custody.Authorize(w, author, action), tt.wantErr)
		})
	}
}

func TestCheckPending(t *testing.T) {
	t.Parallel()
	pending := func(change func(*custody.Wallet)) custody.Wallet {
		w := custody.Wallet{ID: "W", Status: custody.StatusPendingAuth, Intent: &custody.Intent{ID: intentID, ProposalSignature: "PROPOSAL"}}
		if change != nil {
			change(&w)
		}
		return w
	}
	tests := []struct {
		name    string
		wallet  custody.Wallet
		action  func(*custody.Action)
		wantErr wantErr
	}{
		{name: "waiting for this intent", wallet: pending(nil)},
		{name: "other intent", wallet: pending(nil), action: func(a *custody.Action) { a.IntentID = checkerID }, wantErr: wantErr{"ER-409", ""}},
		{name: "other proposal", wallet: pending(nil), action: func(a *custody.Action) { a.ProposalSignature = "OTHER" }, wantErr: wantErr{"ER-409", ""}},
		{name: "wallet without intent", wallet: pending(func(w *custody.Wallet) { w.Intent = nil }), wantErr: wantErr{"ER-409", ""}},
		{name: "approved already", wallet: pending(func(w *custody.Wallet) {
			w.Status, w.Intent.Decision = custody.StatusActive, &custody.Decision{Type: custody.ActionApprove}
		}), wantErr: wantErr{"ER-409", ""}},
		{name: "rejected already", wallet: pending(func(w *custody.Wallet) {
			w.Status, w.Intent.Decision = custody.StatusRejected, &custody.Decision{Type: custody.ActionReject}
		}), wantErr: wantErr{"ER-409", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := validAction()
			if tt.action != nil {
				tt.action(&a)
			}
			checkErr(t, custody.CheckPending(tt.wallet, a), tt.wantErr)
		})
	}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	if status, valid := custody.Outcome(custody.ActionApprove); status != "ACTIVE" || !valid {
		t.Errorf("Outcome(Approve) = %s, %t; want ACTIVE, valid", status, valid)
	}
	if status, valid := custody.Outcome(custody.ActionReject); status != "REJECTED_BY_AUTHORISER" || valid {
		t.Errorf("Outcome(Reject) = %s, %t; want REJECTED_BY_AUTHORISER, not valid", status, valid)
	}
}

func newUserKey(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func sign(t *testing.T, key *ecdsa.PrivateKey, requestJSON []byte) string {
	t.Helper()
	msg, err := canonical.FromJSON(requestJSON)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(msg)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	key, pub := newUserKey(t)
	other, _ := newUserKey(t)
	request, _ := json.Marshal(map[string]any{"author": map[string]string{"id": checkerID, "domainId": domainZT}, "targetDomainId": domainZT,
		"intentId": intentID, "proposalSignature": "PROPOSAL", "type": "Approve"})
	// The same object in another key order and with an empty field: the canonical form is equal.
	reordered := []byte(`{"type":"Approve","proposalSignature":"PROPOSAL","intentId":"` + intentID + `","targetDomainId":"` + domainZT +
		`","author":{"domainId":"` + domainZT + `","id":"` + checkerID + `"},"rejectReason":""}`)
	tampered := []byte(string(reordered[:len(`{"type":"`)]) + "Reject" + string(reordered[len(`{"type":"Approve`):]))
	author := custody.Author{ID: checkerID, PublicKey: pub}
	good := sign(t, key, request)
	tests := []struct {
		name      string
		author    custody.Author
		request   []byte
		signature string
		want      string // "" ok, "403", "internal"
	}{
		{name: "signed by the author", author: author, request: request, signature: good},
		{name: "canonically equal request", author: author, request: reordered, signature: good},
		{name: "tampered request", author: author, request: tampered, signature: good, want: "403"},
		{name: "another key", author: author, request: request, signature: sign(t, other, request), want: "403"},
		{name: "not base64", author: author, request: request, signature: "%%%", want: "403"},
		{name: "empty", author: author, request: request, signature: "", want: "403"},
		{name: "no registered key", author: custody.Author{ID: checkerID}, request: request, signature: good, want: "403 no key"},
		{name: "broken registered key", author: custody.Author{ID: checkerID, PublicKey: "not a key"}, request: request, signature: good, want: "internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := custody.VerifySignature(tt.author, tt.request, tt.signature)
			var appErr *apperr.Error
			switch tt.want {
			case "":
				if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
			case "403":
				checkErr(t, err, wantErr{"ER-403", "signature"})
			case "403 no key":
				checkErr(t, err, wantErr{"ER-403", ""})
			default:
				if err == nil || errors.As(err, &appErr) {
					t.Errorf("err = %v, want an internal error", err)
				}
			}
		})
	}
}
