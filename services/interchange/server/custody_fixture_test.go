package server_test

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/zcustody/suite/platform/testdb"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	custodyserver "github.com/zcustody/suite/services/custody/server"
	custodystore "github.com/zcustody/suite/services/custody/store"
	"github.com/zcustody/suite/services/internal/grpcserver"
)

// Custody wallets of the tests.
const (
	custodyBTC  = "ZTEST-NOBENF-CUST000001"
	custodyETH  = "ZTEST-NOBENF-CUST000002"
	acmeCustody = "ZACME-NOBENF-CUST000001"
)

// custodySide is custody for real: its store on a database of its own, its ledger server
// behind its own interceptor chain, reached over bufconn. down > 0 fails that many
// CreditTransfer calls before they reach custody (custody unreachable).
type custodySide struct {
	store *custodystore.Store
	conn  *grpc.ClientConn
	down  atomic.Int32
	// afterRead, when set, runs once after custody answered a GetSystemAccount.
	afterRead atomic.Pointer[func()]
}

func (c *custodySide) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method == custodyv1.CustodyLedgerService_CreditTransfer_FullMethodName && c.down.Add(-1) >= 0 {
		return status.Error(codes.Unavailable, "custody is down")
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if method == custodyv1.CustodyLedgerService_GetSystemAccount_FullMethodName {
		if f := c.afterRead.Swap(nil); f != nil {
			(*f)()
		}
	}
	return err
}

// startCustody serves custody's ledger API with the test wallets.
func startCustody(t *testing.T, k keys) *custodySide {
	t.Helper()
	st := custodystore.New(testdb.New(t))
	ctx := context.Background()
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, o := range []custody.Opening{
		{ID: custodyBTC, CompanyID: ztest, CurrencyID: "btc-btc"},
		{ID: custodyETH, CompanyID: ztest, CurrencyID: "eth-eth"},
		{ID: acmeCustody, CompanyID: zacme, CurrencyID: "btc-btc"},
	} {
		o.Name, o.At, o.Balance = o.ID, at, custody.Amounts{Available: "0", Ledger: "0"}
		w, err := custody.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutWallet(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	cs := &custodySide{store: st}
	srv := grpcserver.New(slog.New(slog.DiscardHandler), k.verifier, custodyserver.Policy())
	custodyv1.RegisterCustodyLedgerServiceServer(srv.GRPC, custodyserver.NewLedger(st))
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.GRPC.Serve(lis) }()
	t.Cleanup(srv.GRPC.Stop)
	conn, err := grpc.NewClient("passthrough:///custody", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithUnaryInterceptor(cs.intercept))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	cs.conn = conn
	// Every test here ends with custody's journal reconciled.
	t.Cleanup(func() {
		r, err := st.Journal().Reconcile(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !r.Clean() {
			t.Errorf("custody's journal does not reconcile: %v", r.Violations)
		}
	})
	return cs
}

// available is a ZTEST custody wallet's available balance of its currency.
func (c *custodySide) available(t *testing.T, walletID string) string {
	t.Helper()
	w, err := c.store.Wallet(context.Background(), ztest, walletID)
	if err != nil {
		t.Fatal(err)
	}
	return w.AssetBalances[0].AvailableBalance
}
