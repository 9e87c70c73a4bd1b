// Package tsclient_test runs the TypeScript client's tests (clients/typescript) against a real
// suite: it starts one on the embedded database, proposes a v2 wallet for the approval test,
// and runs `npm test` in the client's folder with the suite's URL. Without Node or the npm
// packages (make test installs them) the test skips, except under CI=true.
package tsclient_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/stack"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
)

func TestTypeScriptClient(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(root, "clients", "typescript")
	if _, err := exec.LookPath("npm"); err != nil {
		missing(t, "npm is not installed")
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "tsc")); err != nil {
		missing(t, "the npm packages are not installed (make test installs them)")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	st, err := stack.Start(ctx, stack.Options{DataDir: dataDir, HTTPAddr: "127.0.0.1:0", Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("start the suite: %v", err)
	}
	t.Cleanup(func() { _ = st.Stop() })

	walletID := propose(ctx, t, st, dataDir)
	cmd := exec.CommandContext(ctx, "npm", "test", "--silent")
	cmd.Dir = client
	cmd.Env = append(os.Environ(),
		"CUSTODY_BASE_URL="+st.GatewayURL,
		"DEMO_KEYS="+filepath.Join(root, "deploy", "local", "demo"),
		"PROPOSED_WALLET_ID="+walletID,
	)
	out, err := cmd.CombinedOutput()
	t.Logf("npm test:\n%s", out)
	if err != nil {
		t.Fatalf("the TypeScript client's tests failed: %v", err)
	}
}

// propose has custody propose a v2 wallet of ZTEST, made by its maker, through custody's
// admin API as an internal system (the settlement engine's identity, as the e2e tests do).
func propose(ctx context.Context, t *testing.T, st *stack.Stack, dataDir string) string {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(dataDir, "keys", "settlement-engine.pem"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(st.Services["custody"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	signer := principal.NewSigner("settlement-engine", key, time.Minute)
	callCtx, err := signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := custodyv1.NewCustodyAdminServiceClient(conn).ProposeLegacyWallet(callCtx, &custodyv1.ProposeLegacyWalletRequest{
		CompanyId: demo.CompanyZTEST, CreatedBy: demo.UserEmail("ztest", "maker"), WalletName: "TypeScript client test", CurrencyId: "eth-eth"})
	if err != nil {
		t.Fatalf("propose a wallet: %v", err)
	}
	return resp.GetWalletId()
}

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("the TypeScript client's tests cannot run: %s", why)
	}
	t.Skipf("skipped: %s", why)
}
