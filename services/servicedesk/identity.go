package servicedesk

// Company is a client company and the keys that sign its requests.
type Company struct {
	ID         string
	Name       string
	Active     bool
	PublicKeys []string // PEM, RSA or Ed25519
	DomainID   string   // UUID, as v2 approvals name the company
	// VenueIDs are the trading venues the company operates (none for a client company).
	VenueIDs []string
	// Custodian is true for the custodian's own company (the house): its operators may ask
	// for the custodian-only services (Service.CustodianOnly), e.g. a ledger reversal.
	Custodian bool
}

// User is an API user of a company.
type User struct {
	ID           string // UUID, as v2 approvals name the user
	Email        string
	CompanyID    string
	Roles        []string
	Entitlements []string
	Active       bool
	PublicKey    string // PEM EC P-256, for approval signatures
}
