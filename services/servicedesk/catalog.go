// Package servicedesk is the domain of the service desk: the catalog of services a company
// may request, companies and users, service requests with their state machine and audit
// chain, and the desk that carries a request through it (create, confirm, approve or reject
// under four eyes, cancel, execute by its owner, expire). It is plain Go: the store and the
// owners' plugin API are interfaces (Store, Owners) that app wires to their implementations.
package servicedesk

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/catalog"
)

// Products of the catalog (catalog registry).
const (
	ProductNetwork = catalog.ProductNetwork
	ProductTrading = catalog.ProductTrading
	ProductCustody = catalog.ProductCustody
)

// Request types (catalog registry).
const (
	RequestCreate     = catalog.Create
	RequestUpdate     = catalog.Update
	RequestDeactivate = catalog.Deactivate
)

// Products and RequestTypes list the allowed filter values.
var (
	Products     = catalog.Products()
	RequestTypes = catalog.RequestTypes()
)

// Service is one operation of the catalog.
type Service struct {
	ID          string // e.g. 0x0013-001
	Product     string
	ProductID   int32 // 0x0013 → 19
	Name        string
	RequestType string
	Description string
	// Template is the payload template as a JSON object.
	Template string
	// Owner is the service that validates and executes requests (custody, trading, …).
	Owner string
	// NeedsChecker is false for services the maker's confirmation completes.
	NeedsChecker bool
	// Expiry is how long a request may wait for confirmation and authorisation.
	Expiry time.Duration
	// VenueOnly marks a service offered to venue operators only (a company with venueIds):
	// the settlement instruction is the venue's (DESIGN.md §8).
	VenueOnly bool
	// CustodianOnly marks a service offered to the custodian's own company only (Company
	// Custodian): a ledger reversal corrects the custodian's books.
	CustodianOnly bool
}

// ProductHex renders a product id the way service ids carry it: 19 → "0x0013".
func ProductHex(id int32) string { return fmt.Sprintf("0x%04X", id) }

// ParseProductID accepts "0x0013", "0x13" or "19" and returns 19.
func ParseProductID(s string) (int32, error) {
	base, digits := 10, s
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		base, digits = 16, rest
	}
	n, err := strconv.ParseInt(digits, base, 32)
	if err != nil || n < 0 || digits == "" {
		return 0, fmt.Errorf("product id %q: want hexadecimal 0x0013 or decimal 19", s)
	}
	return int32(n), nil
}

// ServiceTradingWithdrawal is the client's withdrawal from its trading wallet to its custody
// wallet (issue 18), decided by the wallet's venue through endpoint 11.
const ServiceTradingWithdrawal = catalog.TradingWithdrawal

// ServicePolicyChange adopts a new version of the company's approval policy (executed by the
// service desk itself: proposal.go).
const ServicePolicyChange = catalog.PolicyChange

// ServiceLedgerReversal corrects an applied journal entry of trading's or custody's journal by
// a reversal (the custodian's operators only; executed by the journal's service).
const ServiceLedgerReversal = catalog.LedgerReversal

// OwnerFor returns the service that validates and executes a request of svc with payload (its
// canonical JSON): the catalog's owner, except for a ledger reversal, which goes to the
// service whose journal the payload names (catalog.JournalOwners; ER-108 otherwise).
func OwnerFor(svc Service, payload string) (string, error) {
	if svc.ID != ServiceLedgerReversal {
		return svc.Owner, nil
	}
	var p struct {
		Journal any `json:"journal"`
	}
	_ = json.Unmarshal([]byte(payload), &p) // a canonical JSON object
	name, _ := p.Journal.(string)
	if one, ok := p.Journal.([]any); ok && len(one) == 1 { // "x" or ["x"], as the template shows it
		name, _ = one[0].(string)
	}
	if name == "" {
		return "", apperr.Missing("payload.journal")
	}
	owner, ok := catalog.JournalOwners[name]
	if !ok {
		return "", apperr.Invalid(apperr.CodeFormat, "payload.journal", "payload.journal must be trading or custody, got %q", name)
	}
	return owner, nil
}

// terms are what the service desk adds to a registered service: how it is described, its
// payload template, whether it needs a checker, how long a request may wait, and whether
// only venue operators may ask for it.
type terms struct {
	id           string
	description  string
	needsChecker bool
	expiry       time.Duration
	venueOnly    bool
	template     string
}

// custodianServices are offered to the custodian's own company only (Service.CustodianOnly).
var custodianServices = []string{catalog.LedgerReversal}

// Catalog returns the services of the suite: the contract's twelve, the trading wallet
// withdrawal, the ledger reversal and the approval policy change (docs/decisions.md), each
// the registry's entry (services/internal/catalog) with the service desk's terms.
func Catalog() []Service {
	const day = 24 * time.Hour
	list := []terms{
		{catalog.PolicyChange, "A new version of the company's approval policy: an ordered rule list, first match decides, a catch-all last", true, 7 * day, false,
			`{"rules":["name","operations","wallets","currencies","minUsd","destinations","action","groups","combine"],"limits":["name","scope","wallets","currency","maxPerTransaction","amount","window"]}`},
		{catalog.TradingWalletCreate, "Trading Wallet", true, 7 * day, false,
			`{"name":["string"],"currency":["BTC","ETH","XLM","XRP","USDC","EURC"],"tradingVenueId":["string"],"accountUuid":["uuid"],"userUuid":["uuid"]}`},
		{catalog.TradingWalletDeactivate, "Trading Wallet", true, 7 * day, false, `{"walletId":["string"]}`},
		{catalog.SettlementInstruction, "Settlement instruction from a trading wallet", true, 1 * day, true,
			`{"sender":["WALLETID","WALLETREFERENCE"],"destination":["ENDPOINT","WALLETID","WALLETREFERENCE"],"currency":["string"],"venueId":["string"],"amount":["decimal"],"subtractFee":["boolean"],"ledger":["BTC","ETH","XLM","XRP"]}`},
		{catalog.TradingWithdrawal, "Withdrawal from a trading wallet to a custody wallet", true, 1 * day, false,
			`{"sender":["WALLETID"],"destination":["WALLETID"],"amount":["decimal"]}`},
		{catalog.BeneficiaryCreate, "Beneficiary", false, 7 * day, false,
			`{"entityType":["INDIVIDUAL","CORPORATE"],"beneficiaryName":["string"],"registeredAddress":["line1","city","country"],"operatingAddress":["line1","city","country"]}`},
		{catalog.BeneficiaryUpdate, "Beneficiary", true, 7 * day, false,
			`{"beneficiaryId":["string"],"beneficiaryName":["string"],"registeredAddress":["line1","city","country"],"operatingAddress":["line1","city","country"]}`},
		{catalog.BeneficiaryDeactivate, "Beneficiary", true, 7 * day, false, `{"beneficiaryId":["string"]}`},
		{catalog.AddressWhitelist, "Whitelisted Address", true, 7 * day, false,
			`{"address":["string"],"blockchain":["BTC","ETH","XLM","XRP"],"beneficiaryId":["string"],"notes":["string"],"hostedAddress":["boolean"],"vaspId":["string"],"addressPurpose":["INCOMING","OUTGOING"]}`},
		{catalog.AddressDeactivate, "Whitelisted Address", true, 7 * day, false, `{"address":["string"],"blockchain":["BTC","ETH","XLM","XRP"]}`},
		{catalog.LedgerReversal, "Correction of an applied journal entry by its reversal (in full, or per account)", true, 1 * day, false,
			`{"journal":["trading","custody"],"entryId":["string"],"amounts":["account","currency","amount"],"reason":["string"]}`},
		{catalog.CustodyWalletCreate, "Custody Wallet", true, 7 * day, false,
			`{"name":["string"],"currency":["BTC","ETH","XLM","XRP"],"currencyId":["btc-btc","eth-eth","xlm-xlm","xrp-xrp"],"walletOwnerId":["string"]}`},
		{catalog.CustodyWalletRename, "Custody Wallet name", true, 7 * day, false, `{"walletId":["string"],"name":["string"]}`},
		{catalog.CustodyWalletDeactivate, "Custody Wallet", true, 7 * day, false, `{"walletId":["string"]}`},
		{catalog.CustodyTransfer, "Transfer to a beneficiary address", true, 1 * day, false,
			`{"sender":["WALLETID"],"destination":["BENEFICIARYADDRESSID"],"amount":["decimal"],"subtractFee":["boolean"]}`},
	}
	out := make([]Service, 0, len(list))
	for _, t := range list {
		e, _ := catalog.Lookup(t.id) // every id above is registered (TestCatalogMatchesTheRegistry)
		out = append(out, Service{ID: e.ID, Product: e.Product, ProductID: e.ProductID, Name: e.Name, RequestType: e.RequestType,
			Description: t.description, Template: t.template, Owner: e.Owner, NeedsChecker: t.needsChecker, Expiry: t.expiry,
			VenueOnly: t.venueOnly, CustodianOnly: slices.Contains(custodianServices, e.ID)})
	}
	return out
}

// Lookup returns the catalog service id.
func Lookup(id string) (Service, bool) {
	for _, s := range Catalog() {
		if s.ID == id {
			return s, true
		}
	}
	return Service{}, false
}

// CatalogFilter is a validated catalog query: values OR-ed within a field, fields AND-ed.
type CatalogFilter struct {
	Entitled     []string // service ids the caller may see; always applied
	Venue        bool     // the caller operates a venue; without it venue-only services are left out
	Custodian    bool     // the caller is the custodian; without it custodian-only services are left out
	Products     []string
	ProductIDs   []int32
	ServiceIDs   []string
	ServiceNames []string
	RequestTypes []string
}
