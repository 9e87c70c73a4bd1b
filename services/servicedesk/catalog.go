// Package servicedesk is the domain of the service desk: the catalog of services a company
// may request, companies and users, and (later) service requests and their lifecycle.
package servicedesk

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Products of the catalog.
const (
	ProductNetwork = "NETWORK_MGMT"
	ProductTrading = "TRADING"
	ProductCustody = "CUSTODY"
)

// Request types.
const (
	RequestCreate     = "CREATE"
	RequestUpdate     = "UPDATE"
	RequestDeactivate = "DEACTIVATE"
)

// Products and RequestTypes list the allowed filter values.
var (
	Products     = []string{ProductNetwork, ProductTrading, ProductCustody}
	RequestTypes = []string{RequestCreate, RequestUpdate, RequestDeactivate}
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
const ServiceTradingWithdrawal = "0x0003-004"

// Catalog returns the services of the suite: the twelve of DESIGN.md §7 and the trading
// wallet withdrawal (docs/decisions.md).
func Catalog() []Service {
	const day = 24 * time.Hour
	return []Service{
		{ID: "0x0003-001", Product: ProductTrading, ProductID: 0x0003, Name: "Trading Wallet Management", RequestType: RequestCreate,
			Description: "Trading Wallet", Owner: "trading", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"name":["string"],"currency":["BTC","ETH","XLM","XRP","USDC","EURC"],"tradingVenueId":["string"],"accountUuid":["uuid"],"userUuid":["uuid"]}`},
		{ID: "0x0003-002", Product: ProductTrading, ProductID: 0x0003, Name: "Trading Wallet Management", RequestType: RequestDeactivate,
			Description: "Trading Wallet", Owner: "trading", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"walletId":["string"]}`},
		{ID: "0x0003-003", Product: ProductTrading, ProductID: 0x0003, Name: "Settlement Instruction", RequestType: RequestCreate,
			Description: "Settlement instruction from a trading wallet", Owner: "interchange", NeedsChecker: true, Expiry: 1 * day, VenueOnly: true,
			Template: `{"sender":["WALLETID","WALLETREFERENCE"],"destination":["ENDPOINT","WALLETID","WALLETREFERENCE"],"currency":["string"],"venueId":["string"],"amount":["decimal"],"subtractFee":["boolean"],"ledger":["BTC","ETH","XLM","XRP"]}`},
		{ID: ServiceTradingWithdrawal, Product: ProductTrading, ProductID: 0x0003, Name: "Trading Wallet Withdrawal", RequestType: RequestCreate,
			Description: "Withdrawal from a trading wallet to a custody wallet", Owner: "interchange", NeedsChecker: true, Expiry: 1 * day,
			Template: `{"sender":["WALLETID"],"destination":["WALLETID"],"amount":["decimal"]}`},
		{ID: "0x0007-004", Product: ProductNetwork, ProductID: 0x0007, Name: "Beneficiary Management", RequestType: RequestCreate,
			Description: "Beneficiary", Owner: "compliance", NeedsChecker: false, Expiry: 7 * day,
			Template: `{"entityType":["INDIVIDUAL","CORPORATE"],"beneficiaryName":["string"],"registeredAddress":["line1","city","country"],"operatingAddress":["line1","city","country"]}`},
		{ID: "0x0007-005", Product: ProductNetwork, ProductID: 0x0007, Name: "Beneficiary Management", RequestType: RequestUpdate,
			Description: "Beneficiary", Owner: "compliance", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"beneficiaryId":["string"],"beneficiaryName":["string"],"registeredAddress":["line1","city","country"],"operatingAddress":["line1","city","country"]}`},
		{ID: "0x0007-006", Product: ProductNetwork, ProductID: 0x0007, Name: "Beneficiary Management", RequestType: RequestDeactivate,
			Description: "Beneficiary", Owner: "compliance", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"beneficiaryId":["string"]}`},
		{ID: "0x0007-007", Product: ProductNetwork, ProductID: 0x0007, Name: "Address Whitelisting", RequestType: RequestCreate,
			Description: "Whitelisted Address", Owner: "interchange", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"address":["string"],"blockchain":["BTC","ETH","XLM","XRP"],"beneficiaryId":["string"],"notes":["string"],"hostedAddress":["boolean"],"vaspId":["string"],"addressPurpose":["INCOMING","OUTGOING"]}`},
		{ID: "0x0007-008", Product: ProductNetwork, ProductID: 0x0007, Name: "Address Whitelisting", RequestType: RequestDeactivate,
			Description: "Whitelisted Address", Owner: "interchange", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"address":["string"],"blockchain":["BTC","ETH","XLM","XRP"]}`},
		{ID: "0x0013-001", Product: ProductCustody, ProductID: 0x0013, Name: "Custody Wallet Management", RequestType: RequestCreate,
			Description: "Custody Wallet", Owner: "custody", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"name":["string"],"currency":["BTC","ETH","XLM","XRP"],"currencyId":["btc-btc","eth-eth","xlm-xlm","xrp-xrp"],"walletOwnerId":["string"]}`},
		{ID: "0x0013-002", Product: ProductCustody, ProductID: 0x0013, Name: "Custody Wallet Management", RequestType: RequestUpdate,
			Description: "Custody Wallet name", Owner: "custody", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"walletId":["string"],"name":["string"]}`},
		{ID: "0x0013-003", Product: ProductCustody, ProductID: 0x0013, Name: "Custody Wallet Management", RequestType: RequestDeactivate,
			Description: "Custody Wallet", Owner: "custody", NeedsChecker: true, Expiry: 7 * day,
			Template: `{"walletId":["string"]}`},
		{ID: "0x0014-007", Product: ProductCustody, ProductID: 0x0014, Name: "Custody Transfer", RequestType: RequestCreate,
			Description: "Transfer to a beneficiary address", Owner: "custody", NeedsChecker: true, Expiry: 1 * day,
			Template: `{"sender":["WALLETID"],"destination":["BENEFICIARYADDRESSID"],"amount":["decimal"],"subtractFee":["boolean"]}`},
	}
}

// CatalogFilter is a validated catalog query: values OR-ed within a field, fields AND-ed.
type CatalogFilter struct {
	Entitled     []string // service ids the caller may see; always applied
	Venue        bool     // the caller operates a venue; without it venue-only services are left out
	Products     []string
	ProductIDs   []int32
	ServiceIDs   []string
	ServiceNames []string
	RequestTypes []string
}
