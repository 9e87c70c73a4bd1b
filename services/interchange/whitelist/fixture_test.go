package whitelist_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist"
	"github.com/zcustody/suite/services/internal/plugin"
)

const (
	company = "ZTEST"
	other   = "ZACME"
	maker   = "api-maker@ztest.example"
)

// entry is what the directory double knows of one VASP or beneficiary for one company.
type entry struct {
	name   string
	active bool
}

// directory is a test double of compliance's DirectoryService: entries per "company|id".
// Every call must carry interchange's system principal, signed with the fixture's key.
type directory struct {
	verifier *principal.Verifier
	entries  map[string]entry

	mu    sync.Mutex
	down  bool
	calls []string // "CheckVasp company id", "CheckBeneficiary company id"
}

func (d *directory) lookup(ctx context.Context, method, companyID, id string) (entry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	md, _ := metadata.FromOutgoingContext(ctx)
	tokens := md.Get(principal.MetadataKey)
	if len(tokens) != 1 {
		return entry{}, status.Error(codes.Unauthenticated, "no principal")
	}
	p, err := d.verifier.Verify(tokens[0])
	if err != nil || p.Kind != principal.KindSystem || p.System != whitelist.System {
		return entry{}, status.Error(codes.PermissionDenied, "not interchange")
	}
	d.calls = append(d.calls, method+" "+companyID+" "+id)
	if d.down {
		return entry{}, status.Error(codes.Unavailable, "compliance is down")
	}
	e, ok := d.entries[companyID+"|"+id]
	if !ok {
		return entry{}, status.Error(codes.NotFound, "unknown")
	}
	return e, nil
}

func (d *directory) CheckVasp(ctx context.Context, in *compliancev1.CheckVaspRequest, _ ...grpc.CallOption) (*compliancev1.CheckVaspResponse, error) {
	e, err := d.lookup(ctx, "CheckVasp", in.GetCompanyId(), in.GetVaspId())
	if err != nil {
		return nil, err
	}
	return &compliancev1.CheckVaspResponse{VaspId: in.GetVaspId(), VaspName: e.name, Active: e.active}, nil
}

func (d *directory) CheckBeneficiary(ctx context.Context, in *compliancev1.CheckBeneficiaryRequest, _ ...grpc.CallOption) (*compliancev1.CheckBeneficiaryResponse, error) {
	e, err := d.lookup(ctx, "CheckBeneficiary", in.GetCompanyId(), in.GetBeneficiaryId())
	if err != nil {
		return nil, err
	}
	return &compliancev1.CheckBeneficiaryResponse{BeneficiaryId: in.GetBeneficiaryId(), BeneficiaryName: e.name, Active: e.active}, nil
}

func (d *directory) set(key string, e entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.entries[key] = e
}

func (d *directory) setDown(down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = down
}

func (d *directory) callLog() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

type fixture struct {
	db      *mongo.Database
	svc     *whitelist.Service
	plugin  pluginv1.PluginServiceServer
	dir     *directory
	operKey ed25519.PrivateKey
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	db := testdb.New(t)
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := &directory{verifier: principal.NewVerifier(map[string]ed25519.PublicKey{whitelist.System: pub}), entries: map[string]entry{
		company + "|VASP-001":             {"Global Exchange Ltd", true},
		other + "|VASP-001":               {"Global Exchange Ltd", true},
		company + "|VASP-002":             {"ZTEST Private Venue", true},
		company + "|VASP-004":             {"Dormant Exchange", false},
		other + "|VASP-004":               {"Dormant Exchange", false},
		company + "|BNF-ZTEST-AAAAAAAAAA": {"Alice Treasury", true},
		company + "|BNF-ZTEST-DDDDDDDDDD": {"Dormant Beneficiary", false},
	}}
	svc, err := whitelist.Setup(context.Background(), whitelist.Deps{DB: db, Compliance: dir,
		Signer: principal.NewSigner(whitelist.System, key, time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	_, operKey, _ := ed25519.GenerateKey(rand.Reader)
	return fixture{db: db, svc: svc, plugin: svc.Plugin(), dir: dir, operKey: operKey}
}

// servicedesk is the context of a call by the service desk.
func servicedesk() context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: plugin.ServicedeskSystem})
}

// caller is the context of a company-level call by companyID.
func caller(companyID string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindCompany, CompanyID: companyID})
}

func (f fixture) count(t *testing.T) int64 {
	t.Helper()
	n, err := f.db.Collection("whitelisted_addresses").CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func request(t *testing.T, companyID, requestID, serviceID string, payload map[string]any) *pluginv1.ServiceRequest {
	t.Helper()
	s, err := structpb.NewStruct(payload)
	if err != nil {
		t.Fatal(err)
	}
	requestType := "CREATE"
	if serviceID == "0x0007-008" {
		requestType = "DEACTIVATE"
	}
	return &pluginv1.ServiceRequest{RequestId: requestID, ServiceId: serviceID, RequestType: requestType, CompanyId: companyID,
		MakerEmail: maker, Payload: s, CompanyName: "Zodia Test Ltd"}
}

func whitelistPayload(addr, chain, vasp string) map[string]any {
	return map[string]any{"address": []any{addr}, "blockchain": []any{chain}, "vaspId": []any{vasp},
		"addressPurpose": []any{"INCOMING, OUTGOING"}, "hostedAddress": []any{true}}
}

// run validates and executes a request as the service desk would, and returns the entity id.
func (f fixture) run(t *testing.T, r *pluginv1.ServiceRequest) string {
	t.Helper()
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()}); err != nil {
		t.Fatal(err)
	}
	return v.GetEntityIds()[0]
}

func wantAppErr(t *testing.T, err error, code, field string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want %s on %q", err, code, field)
	}
	if ae.Code != code || ae.Field != field {
		t.Errorf("err = %s on %q (%s), want %s on %q", ae.Code, ae.Field, ae.Message, code, field)
	}
}
