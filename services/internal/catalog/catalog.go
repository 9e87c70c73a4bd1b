// Package catalog is the registry of the service desk's catalog services: each service id,
// its product, name, request type and owning service, declared once. The service desk builds
// its catalog from it, the plugin framework takes request types from it, and every owner
// names the services it carries out by its constants.
package catalog

import "slices"

// The suite's services; the last four own catalog services. Each name is also the service's
// database, log tag and system principal.
const (
	Servicedesk = "servicedesk"
	Trading     = "trading"
	Interchange = "interchange"
	Custody     = "custody"
	Compliance  = "compliance"
)

// Products of the catalog.
const (
	ProductNetwork = "NETWORK_MGMT"
	ProductTrading = "TRADING"
	ProductCustody = "CUSTODY"
)

// Request types.
const (
	Create     = "CREATE"
	Update     = "UPDATE"
	Deactivate = "DEACTIVATE"
)

// Service ids. They are part of the public contract: never change one.
const (
	TradingWalletCreate     = "0x0003-001"
	TradingWalletDeactivate = "0x0003-002"
	SettlementInstruction   = "0x0003-003"
	TradingWithdrawal       = "0x0003-004"
	BeneficiaryCreate       = "0x0007-004"
	BeneficiaryUpdate       = "0x0007-005"
	BeneficiaryDeactivate   = "0x0007-006"
	AddressWhitelist        = "0x0007-007"
	AddressDeactivate       = "0x0007-008"
	CustodyWalletCreate     = "0x0013-001"
	CustodyWalletRename     = "0x0013-002"
	CustodyWalletDeactivate = "0x0013-003"
	CustodyTransfer         = "0x0014-007"
	// LedgerReversal corrects an applied journal entry by a reversal (the custodian's own
	// operators only). Its owner is the service whose journal the payload names
	// (JournalOwners); the registry names trading's.
	LedgerReversal = "0x0009-001"
	// PolicyChange adopts a new version of the company's approval policy; the service desk
	// itself validates and executes it.
	PolicyChange = "0x0001-001"
)

// Destination kinds: where a request sends money, as its owner reports it to the service
// desk (plugin.v1 PolicySubject.destination) and the approval policy's rules match it.
const (
	DestinationOwnCustody  = "OWN_CUSTODY_WALLET"  // one of the company's own custody wallets
	DestinationWhitelisted = "WHITELISTED_ADDRESS" // an address on the company's whitelist
	DestinationOther       = "OTHER"               // anywhere else
)

// JournalOwners maps the journals a ledger reversal (LedgerReversal) may name, its payload's
// "journal", to the service that keeps that journal and carries the reversal out.
var JournalOwners = map[string]string{"trading": Trading, "custody": Custody}

// Entry is one registered catalog service.
type Entry struct {
	ID          string
	Product     string
	ProductID   int32 // 0x0013 → 19; the id's prefix
	Name        string
	RequestType string
	// Owner is the service that validates and executes the service's requests.
	Owner string
}

// entries is the registry, ordered by id.
var entries = [...]Entry{
	{PolicyChange, ProductNetwork, 0x0001, "Approval Policy", Update, Servicedesk},
	{TradingWalletCreate, ProductTrading, 0x0003, "Trading Wallet Management", Create, Trading},
	{TradingWalletDeactivate, ProductTrading, 0x0003, "Trading Wallet Management", Deactivate, Trading},
	{SettlementInstruction, ProductTrading, 0x0003, "Settlement Instruction", Create, Interchange},
	{TradingWithdrawal, ProductTrading, 0x0003, "Trading Wallet Withdrawal", Create, Interchange},
	{BeneficiaryCreate, ProductNetwork, 0x0007, "Beneficiary Management", Create, Compliance},
	{BeneficiaryUpdate, ProductNetwork, 0x0007, "Beneficiary Management", Update, Compliance},
	{BeneficiaryDeactivate, ProductNetwork, 0x0007, "Beneficiary Management", Deactivate, Compliance},
	{AddressWhitelist, ProductNetwork, 0x0007, "Address Whitelisting", Create, Interchange},
	{AddressDeactivate, ProductNetwork, 0x0007, "Address Whitelisting", Deactivate, Interchange},
	{LedgerReversal, ProductCustody, 0x0009, "Ledger Reversal", Create, Trading},
	{CustodyWalletCreate, ProductCustody, 0x0013, "Custody Wallet Management", Create, Custody},
	{CustodyWalletRename, ProductCustody, 0x0013, "Custody Wallet Management", Update, Custody},
	{CustodyWalletDeactivate, ProductCustody, 0x0013, "Custody Wallet Management", Deactivate, Custody},
	{CustodyTransfer, ProductCustody, 0x0014, "Custody Transfer", Create, Custody},
}

// Entries returns every registered service, ordered by id.
func Entries() []Entry { return slices.Clone(entries[:]) }

// Lookup returns the registered service id.
func Lookup(id string) (Entry, bool) {
	i := slices.IndexFunc(entries[:], func(e Entry) bool { return e.ID == id })
	if i < 0 {
		return Entry{}, false
	}
	return entries[i], true
}

// Owners lists the services that own catalog services.
func Owners() []string { return []string{Trading, Interchange, Custody, Compliance} }

// OwnedBy returns the ids of the services owner carries out, ordered by id.
func OwnedBy(owner string) []string {
	var out []string
	for _, e := range entries {
		if e.Owner == owner {
			out = append(out, e.ID)
		}
	}
	return out
}

// Products lists the products (the allowed values of the products filter).
func Products() []string { return []string{ProductNetwork, ProductTrading, ProductCustody} }

// RequestTypes lists the request types (the allowed values of the requestTypes filter).
func RequestTypes() []string { return []string{Create, Update, Deactivate} }
