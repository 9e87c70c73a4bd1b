package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/compliance"
	complianceserver "github.com/zcustody/suite/services/compliance/server"
	compliancestore "github.com/zcustody/suite/services/compliance/store"
	compliancedir "github.com/zcustody/suite/services/internal/directory"
	"github.com/zcustody/suite/services/internal/grpcserver"
)

// Beneficiaries of the tests, in compliance's own database.
const (
	ownBeneficiary     = "BNF-ZTEST-AB12CD34EF"
	dormantBeneficiary = "BNF-ZTEST-DORMANT001"
	acmeBeneficiary    = "BNF-ZACME-AB12CD34EF"
)

// startCompliance serves compliance's real directory, on a database of its own, behind its
// own interceptor chain over bufconn, and returns custody's client of it (signing as custody).
func startCompliance(t *testing.T) *compliancedir.Client {
	t.Helper()
	st := compliancestore.New(testdb.New(t))
	ctx := context.Background()
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range []compliance.Beneficiary{
		{ID: ownBeneficiary, CompanyID: "ZTEST", Status: compliance.StatusActive},
		{ID: dormantBeneficiary, CompanyID: "ZTEST", Status: compliance.StatusDeactivated},
		{ID: acmeBeneficiary, CompanyID: "ZACME", Status: compliance.StatusActive},
	} {
		b.EntityType, b.Name, b.LegalName, b.Version, b.CreatedAt, b.UpdatedAt = "CORPORATE", b.ID, b.ID, 1, at, at
		b.RegisteredAddress = compliance.Address{Line1: "1 Main St", City: "London", Country: "GB"}
		if err := st.PutBeneficiary(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcserver.New(slog.New(slog.DiscardHandler), principal.NewVerifier(map[string]ed25519.PublicKey{"custody": pub}), complianceserver.Policy())
	compliancev1.RegisterDirectoryServiceServer(srv.GRPC, complianceserver.NewDirectory(st, st))
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.GRPC.Serve(lis) }()
	t.Cleanup(srv.GRPC.Stop)
	conn, err := grpc.NewClient("passthrough:///compliance", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return compliancedir.New(compliancev1.NewDirectoryServiceClient(conn), principal.NewSigner("custody", key, time.Minute), "custody", nil)
}
