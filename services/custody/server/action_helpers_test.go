package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
)

// Domains of the test companies.
const (
	domainZTEST = "7d7a1c9e-1f3b-4c2a-9d8e-0a1b2c3d4e5f"
	domainZACME = "8e8b2d0f-2a4c-4d3b-8e9f-1b2c3d4e5f60"
)

// user is a directory entry with its private approval key.
type user struct {
	custody.Author
	key *ecdsa.PrivateKey
}

// directory is the user directory of the tests (the service desk's GetUser).
type directory map[string]user

func (d directory) Author(_ context.Context, id string) (custody.Author, error) {
	u, ok := d[id]
	if !ok {
		return custody.Author{}, fmt.Errorf("user %s: %w", id, apperr.ErrNotFound)
	}
	return u.Author, nil
}

func (d directory) AuthorByEmail(_ context.Context, companyID, email string) (custody.Author, error) {
	for _, u := range d {
		if u.Email == email && u.CompanyID == companyID {
			return u.Author, nil
		}
	}
	return custody.Author{}, fmt.Errorf("user %s: %w", email, apperr.ErrNotFound)
}

func newUser(t *testing.T, id, email, companyID, domain string, roles ...string) user {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	return user{Author: custody.Author{ID: id, Email: email, CompanyID: companyID, DomainID: domain, Roles: roles, Active: true, PublicKey: pub}, key: key}
}

// actionFixture holds a store, the directory and a server that uses both.
type actionFixture struct {
	fixture
	users directory
	srv   *server.Server
}

func newActionFixture(t *testing.T) actionFixture {
	t.Helper()
	f := newFixture(t)
	users := directory{}
	for _, u := range []user{
		newUser(t, "11111111-1111-4111-8111-111111111111", "api-checker@ztest.example", company, domainZTEST, "CHECKER"),
		newUser(t, "22222222-2222-4222-8222-222222222222", maker, company, domainZTEST, "MAKER"),
		newUser(t, "33333333-3333-4333-8333-333333333333", "api-checker@zacme.example", "ZACME", domainZACME, "CHECKER"),
	} {
		users[u.ID] = u
	}
	srv := server.New(f.store, server.Options{Authors: users, Now: func() time.Time { return time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC) }})
	return actionFixture{fixture: f, users: users, srv: srv}
}

func (f actionFixture) checker() user      { return f.users["11111111-1111-4111-8111-111111111111"] }
func (f actionFixture) maker() user        { return f.users["22222222-2222-4222-8222-222222222222"] }
func (f actionFixture) otherChecker() user { return f.users["33333333-3333-4333-8333-333333333333"] }

// propose stores a proposed ETH wallet of companyID made by the maker.
func (f actionFixture) propose(t *testing.T, companyID string) custody.Wallet {
	t.Helper()
	w, err := custody.Propose(custody.Proposal{CompanyID: companyID, CreatedBy: maker, Name: "Proposed", CurrencyID: "eth-eth", At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.InsertWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// action is the action a user of the wallet's company domain takes on w.
func action(author user, w custody.Wallet, typ string) *custodyv1.WalletActionRequest {
	return &custodyv1.WalletActionRequest{Author: &custodyv1.Author{Id: author.ID, DomainId: author.DomainID},
		TargetDomainId: author.DomainID, IntentId: w.Intent.ID, ProposalSignature: w.Intent.ProposalSignature, Type: typ}
}

// signed is the body of endpoint 4 for wallet w with r signed by key.
func signed(t *testing.T, w custody.Wallet, r *custodyv1.WalletActionRequest, key *ecdsa.PrivateKey) *custodyv1.ActOnLegacyWalletRequest {
	t.Helper()
	raw, err := protojson.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := canonical.FromJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(msg)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return &custodyv1.ActOnLegacyWalletRequest{WalletId: w.ID, Request: r, Signature: base64.StdEncoding.EncodeToString(sig)}
}
