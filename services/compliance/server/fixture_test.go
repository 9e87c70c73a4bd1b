package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/compliance/server"
	"github.com/zcustody/suite/services/compliance/store"
	"github.com/zcustody/suite/services/internal/plugin"
)

const (
	company = "ZTEST"
	maker   = "api-maker@ztest.example"
)

type fixture struct {
	db        *mongo.Database
	store     *store.Store
	server    *server.Server
	directory *server.Directory
	plugin    *plugin.Server
}

// newFixture stores the demo-like registry: V1 open to all, V2 only for ZTEST, V3 only for
// ZACME, V4 open but switched off by the operator.
func newFixture(t *testing.T) fixture {
	t.Helper()
	db := testdb.New(t)
	st := store.New(db)
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, v := range []compliance.VASP{
		{ID: "V1", Name: "One", TravelRuleMethod: compliance.TravelRuleTrust, Country: "GB", Active: true},
		{ID: "V2", Name: "Two", TravelRuleMethod: compliance.TravelRuleManual, Country: "CH", Active: true, RestrictedCompanies: []string{company}},
		{ID: "V3", Name: "Three", TravelRuleMethod: compliance.TravelRuleZodia, Country: "SG", Active: true, RestrictedCompanies: []string{"ZACME"}},
		{ID: "V4", Name: "Four", TravelRuleMethod: compliance.TravelRuleManual, Country: "US"},
	} {
		if err := st.PutVASP(context.Background(), v); err != nil {
			t.Fatal(err)
		}
	}
	return fixture{db: db, store: st, server: server.New(st), directory: server.NewDirectory(st, st),
		plugin: server.NewPlugin(st, plugin.NewLedger(db))}
}

func as(p principal.Principal) context.Context { return principal.NewContext(context.Background(), p) }

// servicedesk is the context of a call by the service desk.
func servicedesk() context.Context {
	return as(principal.Principal{Kind: principal.KindSystem, System: plugin.ServicedeskSystem})
}

func companyCtx(companyID string) context.Context {
	return as(principal.Principal{Kind: principal.KindCompany, CompanyID: companyID})
}

// put stores an ACTIVE beneficiary of the company, changed by change.
func (f fixture) put(t *testing.T, companyID, id string, change func(*compliance.Beneficiary)) compliance.Beneficiary {
	t.Helper()
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	b := compliance.Create(id, companyID, maker, "SERV-REQ-SEED", compliance.NewBeneficiary{EntityType: compliance.EntityCorporate,
		Name: "Old Name Ltd", RegisteredAddress: compliance.Address{Line1: "1 Old Road", City: "London", Country: "GB"}}, at)
	if change != nil {
		change(&b)
	}
	if err := f.store.PutBeneficiary(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

func (f fixture) count(t *testing.T, collection string) int64 {
	t.Helper()
	n, err := f.db.Collection(collection).CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func request(t *testing.T, requestID, serviceID string, payload map[string]any) *pluginv1.ServiceRequest {
	t.Helper()
	s, err := structpb.NewStruct(payload)
	if err != nil {
		t.Fatal(err)
	}
	return &pluginv1.ServiceRequest{RequestId: requestID, ServiceId: serviceID, CompanyId: company, MakerEmail: maker, Payload: s}
}

func address(line1, city, country string) map[string]any {
	return map[string]any{"line1": line1, "city": city, "country": country}
}

// createPayload is a valid 0x0007-004 payload.
func createPayload() map[string]any {
	return map[string]any{"entityType": []any{"CORPORATE"}, "beneficiaryName": []any{"Acme Supplier GmbH"},
		"registeredAddress": address("1 Main Street", "Berlin", "DE"), "operatingAddress": address("Bahnhofstrasse 1", "Zürich", "CH")}
}

// wantErr is the gRPC code, ER code and field a call must fail with.
type wantErr struct {
	status      codes.Code
	code, field string
}

func checkErr(t *testing.T, err error, want wantErr) {
	t.Helper()
	var appErr *apperr.Error
	if !errors.As(err, &appErr) {
		t.Fatalf("err = %v, want %s %s on %q", err, want.status, want.code, want.field)
	}
	if got := (wantErr{appErr.Status, appErr.Code, appErr.Field}); got != want {
		t.Fatalf("err = %v %s on %q (%s), want %v %s on %q", got.status, got.code, got.field, appErr.Message, want.status, want.code, want.field)
	}
}
