package demo

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/servicedesk"
	servicedeskstore "github.com/zcustody/suite/services/servicedesk/store"
)

// Demo companies: two clients, the operators of the two demo venues, and the custodian's own
// company (the house, whose operators correct the ledgers: 0x0009-001).
const (
	CompanyZTEST    = "ZTEST"
	CompanyZACME    = "ZACME"
	CompanyZBYBIT   = "ZBYBIT"   // operates the venue BYBIT
	CompanyZDERIBIT = "ZDERIBIT" // operates the venue DERIBIT
	CompanyZCUSTODY = "ZCUSTODY" // the custodian
)

// Demo venues and their operators.
const (
	VenueBYBIT   = "BYBIT"
	VenueDERIBIT = "DERIBIT"
)

// UserEmail returns the demo user's e-mail, e.g. UserEmail("ztest", "maker").
func UserEmail(company, role string) string { return "api-" + role + "@" + company + ".example" }

// demoNamespace derives the demo's stable UUIDs.
var demoNamespace = uuid.MustParse("6f1c3e2a-7d4b-4c1e-9a55-2b8e0f4d6a10")

// UserID returns the demo user's id (a UUID stable across runs), e.g. UserID("ztest", "checker").
func UserID(company, role string) string {
	return uuid.NewSHA1(demoNamespace, []byte("user:"+UserEmail(company, role))).String()
}

// DomainID returns the demo company's domain id (a UUID stable across runs).
func DomainID(companyID string) string {
	return uuid.NewSHA1(demoNamespace, []byte("domain:"+companyID)).String()
}

type demoUser struct {
	company, role string
	roles         []string
	entitlements  []string
}

// clientServices are the catalog's services for a client company: all but the venue
// operators' and the custodian's.
func clientServices() []string {
	var ids []string
	for _, s := range servicedesk.Catalog() {
		if !s.VenueOnly && !s.CustodianOnly {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

func users() []demoUser {
	all := clientServices()
	custodyOnly := []string{"0x0013-001", "0x0013-002", "0x0013-003", "0x0003-001"}
	venue := []string{"0x0003-003"}
	custodian := []string{servicedesk.ServiceLedgerReversal}
	acme := []string{"0x0003-001", "0x0003-002", "0x0007-004", "0x0007-005", "0x0007-006", "0x0007-007", "0x0007-008"}
	return []demoUser{
		{"ztest", "maker", []string{principal.RoleMaker}, all},
		{"ztest", "checker", []string{principal.RoleChecker}, all},
		{"ztest", "viewer", []string{principal.RoleViewer}, custodyOnly},
		// admin holds both roles: the four-eyes rule must still stop it approving its own requests.
		{"ztest", "admin", []string{principal.RoleMaker, principal.RoleChecker}, all},
		{"zacme", "maker", []string{principal.RoleMaker}, acme},
		{"zacme", "checker", []string{principal.RoleChecker}, acme},
		{"zacme", "viewer", []string{principal.RoleViewer}, acme},
		// The venue operators' desks: settlement instructions at their venue (0x0003-003).
		{"zbybit", "maker", []string{principal.RoleMaker}, venue},
		{"zbybit", "checker", []string{principal.RoleChecker}, venue},
		{"zbybit", "viewer", []string{principal.RoleViewer}, venue},
		{"zderibit", "maker", []string{principal.RoleMaker}, venue},
		{"zderibit", "checker", []string{principal.RoleChecker}, venue},
		{"zderibit", "viewer", []string{principal.RoleViewer}, venue},
		// The custodian's operators: ledger reversals (0x0009-001), maker then checker.
		{"zcustody", "maker", []string{principal.RoleMaker}, custodian},
		{"zcustody", "checker", []string{principal.RoleChecker}, custodian},
		{"zcustody", "viewer", []string{principal.RoleViewer}, custodian},
	}
}

// VASPs of the demo registry.
func VASPs() []compliance.VASP {
	return []compliance.VASP{
		{ID: "VASP-001", Name: "Global Exchange Ltd", TravelRuleMethod: compliance.TravelRuleTrust, Country: "GB", Active: true},
		{ID: "VASP-002", Name: "ZTEST Private Venue", TravelRuleMethod: compliance.TravelRuleManual, Country: "CH", Active: true, RestrictedCompanies: []string{CompanyZTEST}},
		{ID: "VASP-003", Name: "Acme Partner Brokerage", TravelRuleMethod: compliance.TravelRuleZodia, Country: "SG", Active: true, RestrictedCompanies: []string{CompanyZACME}},
		{ID: "VASP-004", Name: "Dormant Exchange", TravelRuleMethod: compliance.TravelRuleManual, Country: "US", Active: false},
	}
}

// Load writes the demo data into each owning service's database (idempotent).
func Load(ctx context.Context, client *mongo.Client) error {
	sd := servicedeskstore.New(client.Database("servicedesk"))
	if err := sd.EnsureIndexes(ctx); err != nil {
		return err
	}
	for _, c := range []struct {
		id, name, key string
		venues        []string
		custodian     bool
	}{
		{CompanyZTEST, "Zodia Test Ltd", "ztest-company.pub.pem", nil, false},
		{CompanyZACME, "Acme Treasury AG", "zacme-company.pub.pem", nil, false},
		{CompanyZBYBIT, "Bybit Settlement Desk", "zbybit-company.pub.pem", []string{VenueBYBIT}, false},
		{CompanyZDERIBIT, "Deribit Settlement Desk", "zderibit-company.pub.pem", []string{VenueDERIBIT}, false},
		{CompanyZCUSTODY, "Zodia Custody Operations", "zcustody-company.pub.pem", nil, true},
	} {
		pub, err := Key(c.key)
		if err != nil {
			return err
		}
		company := servicedesk.Company{ID: c.id, Name: c.name, Active: true, PublicKeys: []string{string(pub)}, DomainID: DomainID(c.id),
			VenueIDs: c.venues, Custodian: c.custodian}
		if err := sd.PutCompany(ctx, company); err != nil {
			return err
		}
	}
	for _, u := range users() {
		pub, err := Key(u.company + "-" + u.role + ".pub.pem")
		if err != nil {
			return err
		}
		user := servicedesk.User{ID: UserID(u.company, u.role), Email: UserEmail(u.company, u.role), CompanyID: companyID(u.company), Roles: u.roles,
			Entitlements: u.entitlements, Active: true, PublicKey: string(pub)}
		if err := sd.PutUser(ctx, user); err != nil {
			return err
		}
	}
	if err := loadCustody(ctx, client); err != nil {
		return err
	}
	if err := loadCompliance(ctx, client); err != nil {
		return err
	}
	key, err := operatorKey()
	if err != nil {
		return err
	}
	if err := loadInterchange(ctx, client, key); err != nil {
		return err
	}
	if err := loadTrading(ctx, client, key); err != nil {
		return err
	}
	return loadSettlement(ctx, client)
}

func companyID(short string) string {
	return strings.ToUpper(short)
}
