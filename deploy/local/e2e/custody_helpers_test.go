package e2e_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	custodystore "github.com/zcustody/suite/services/custody/store"
)

// Paths of the custody endpoints.
const (
	feesPath    = "/v3/api/custody/currencies/fees"
	walletsPath = "/v2/api/core/wallets"
)

func trustlinePath(walletID, currencyID string) string {
	return "/v3/api/custody/wallets/" + walletID + "/activate/" + currencyID
}

func walletActionPath(walletID string) string { return "/v2/api/core/wallets/" + walletID + "/action" }

// custodyAdmin returns custody's internal admin client and a context maker for calls as the
// settlement engine (an internal system every service trusts).
func custodyAdmin(t *testing.T) (custodyv1.CustodyAdminServiceClient, func() context.Context) {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", "settlement-engine.pem"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(env.stack.Services["custody"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer := principal.NewSigner("settlement-engine", key, time.Minute)
	return custodyv1.NewCustodyAdminServiceClient(conn), func() context.Context {
		ctx, err := signer.OutgoingContext(t.Context(), principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
}

// custodyStore opens the custody service's own store on the stack's database: the tests put
// Stellar wallets with exact XLM balances (balances move on-chain, not through an API).
func custodyStore(t *testing.T) *custodystore.Store {
	t.Helper()
	client, err := mongodb.Connect(context.Background(), env.stack.MongoURI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return custodystore.New(client.Database("custody"))
}

// stellarWallet puts a new ACTIVE ZTEST wallet opened in currencyID holding amount available
// and returns its id.
func stellarWallet(t *testing.T, currencyID, amount string) string {
	t.Helper()
	w, err := custody.Open(custody.Opening{ID: custody.NewWalletID(demo.CompanyZTEST, ""), Name: "E2E Stellar", CompanyID: demo.CompanyZTEST,
		CreatedBy: demo.UserEmail("ztest", maker), CurrencyID: currencyID, At: time.Now(), Balance: custody.Amounts{Available: amount, Ledger: amount}})
	if err != nil {
		t.Fatal(err)
	}
	if err := custodyStore(t).PutWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w.ID
}

// legacyWallet is a wallet of endpoint 14.
type legacyWallet struct {
	WalletID      string `json:"walletId"`
	WalletCompany string `json:"walletCompany"`
	Status        string `json:"status"`
	Valid         bool   `json:"valid"`
	Blockchain    string `json:"blockchain"`
	AssetBalances []struct {
		Currency         string `json:"currency"`
		AvailableBalance string `json:"availableBalance"`
	} `json:"assetBalances"`
}

// legacyWalletOf returns the company's wallet id as endpoint 14 lists it (fails if absent).
func legacyWalletOf(t *testing.T, companyID, id string) legacyWallet {
	t.Helper()
	var got struct {
		Wallets []legacyWallet `json:"wallets"`
	}
	wantOK(t, do(t, newClient(companyID, company), http.MethodGet, walletsPath, nil), &got)
	for _, w := range got.Wallets {
		if w.WalletID == id {
			return w
		}
	}
	t.Fatalf("endpoint 14 of %s does not list wallet %s", companyID, id)
	return legacyWallet{}
}

// erCodeOf returns the ER code a gRPC error carries in its ErrorInfo.
func erCodeOf(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

// asGatewayCompany is a context carrying a ZTEST company principal signed with the gateway's
// key: a client's identity, not an internal system's.
func asGatewayCompany(t *testing.T) context.Context {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", "gateway-principal.pem"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := principal.NewSigner("gateway", key, time.Minute).OutgoingContext(t.Context(), principal.Principal{Kind: principal.KindCompany, CompanyID: demo.CompanyZTEST})
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}
