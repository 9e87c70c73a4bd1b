package e2e_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/compliance"
	compliancestore "github.com/zcustody/suite/services/compliance/store"
)

// Test VASPs the compliance tests add to the registry next to the demo ones. Each is used
// by one test only, so parallel tests never see each other's activation changes:
//
//	E2E-PAGE-1..5 (ZTEST only): TestVASPSearchPages, TestVASPSearchFilters (no changes)
//	E2E-SHARED (ZTEST and ZACME), E2E-HIDDEN (ZNOBODY): TestVASPSearchVisibility (no changes)
//	E2E-OFF (ZACME only, operator off): TestVASPSearchVisibility, TestVASPSearchReflectsActivation (no changes)
//	E2E-DIR-1 (ZTEST only): TestDirectoryCheckVasp
//
// TestVASPSearchReflectsActivation adds its own E2E-ACT-<random> VASP on every run.
func testVASPs() []compliance.VASP {
	page := func(n, method string) compliance.VASP {
		return compliance.VASP{ID: "E2E-PAGE-" + n, Name: "E2E Page " + n, TravelRuleMethod: method, Country: "GB", Active: true,
			RestrictedCompanies: []string{demo.CompanyZTEST}}
	}
	return []compliance.VASP{
		page("1", compliance.TravelRuleTrust), page("2", compliance.TravelRuleManual), page("3", compliance.TravelRuleTrust),
		page("4", compliance.TravelRuleZodia), page("5", compliance.TravelRuleManual),
		{ID: "E2E-SHARED", Name: "E2E Shared", TravelRuleMethod: compliance.TravelRuleUnhosted, Active: true,
			RestrictedCompanies: []string{demo.CompanyZACME, demo.CompanyZTEST}},
		{ID: "E2E-HIDDEN", Name: "E2E Hidden", TravelRuleMethod: compliance.TravelRuleTrust, Active: true, RestrictedCompanies: []string{"ZNOBODY"}},
		{ID: "E2E-OFF", Name: "E2E Operator Off", TravelRuleMethod: compliance.TravelRuleManual, RestrictedCompanies: []string{demo.CompanyZACME}},
		{ID: "E2E-DIR-1", Name: "E2E Directory", TravelRuleMethod: compliance.TravelRuleTrust, Active: true,
			RestrictedCompanies: []string{demo.CompanyZTEST}},
	}
}

var registryOnce struct {
	sync.Once
	err error
}

// complianceStore opens the compliance service's own store on the stack's database: the
// tests add registry entries (the operator's side has no API) and read the activation audit.
func complianceStore(t *testing.T) *compliancestore.Store {
	t.Helper()
	client, err := mongodb.Connect(context.Background(), env.stack.MongoURI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return compliancestore.New(client.Database("compliance"))
}

// withTestVASPs adds the test VASPs once per run.
func withTestVASPs(t *testing.T) {
	t.Helper()
	registryOnce.Do(func() {
		st := complianceStore(t)
		for _, v := range testVASPs() {
			if err := st.PutVASP(context.Background(), v); err != nil {
				registryOnce.err = err
				return
			}
		}
	})
	if registryOnce.err != nil {
		t.Fatalf("add test VASPs: %v", registryOnce.err)
	}
}

// systemKeyFiles names the demo key of each internal system.
var systemKeyFiles = map[string]string{
	"settlement-engine": "settlement-engine.pem", "interchange": "interchange-internal.pem",
	"custody": "custody-internal.pem", "servicedesk": "servicedesk-internal.pem",
}

// directoryAs returns compliance's internal DirectoryService client and a context maker for
// calls as the given system, signed with that system's own demo key (a system may only
// speak for itself).
func directoryAs(t *testing.T, system string) (compliancev1.DirectoryServiceClient, func() context.Context) {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", systemKeyFiles[system]))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(env.stack.Services["compliance"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer := principal.NewSigner(system, key, time.Minute)
	return compliancev1.NewDirectoryServiceClient(conn), func() context.Context {
		ctx, err := signer.OutgoingContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: system})
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
}

// checkBeneficiary asks the directory about a company's beneficiary as the settlement engine.
func checkBeneficiary(t *testing.T, companyID, id string) (*compliancev1.CheckBeneficiaryResponse, error) {
	t.Helper()
	client, ctx := directoryAs(t, "settlement-engine")
	return client.CheckBeneficiary(ctx(), &compliancev1.CheckBeneficiaryRequest{CompanyId: companyID, BeneficiaryId: id})
}
