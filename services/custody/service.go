package custody

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/ledger"
)

// Catalog services custody carries out.
const (
	ServiceCreateWallet     = catalog.CustodyWalletCreate
	ServiceRenameWallet     = catalog.CustodyWalletRename
	ServiceDeactivateWallet = catalog.CustodyWalletDeactivate
	ServiceTransfer         = catalog.CustodyTransfer // not available yet
)

// Limits of the wallet payloads.
const (
	MaxWalletsPerRequest = 20
	MaxNameLen           = 128
	MaxOwnerIDLen        = 32
)

var (
	namePattern  = regexp.MustCompile(`^[a-zA-Z0-9 -]+$`)
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
)

// NewWallet is one wallet a 0x0013-001 request creates.
type NewWallet struct {
	Name     string
	Currency ledger.Currency
	OwnerID  string // walletOwnerId, empty for none
}

// Rename is a 0x0013-002 request.
type Rename struct {
	WalletID string
	Name     string
}

// ParseCreate reads a 0x0013-001 payload: arrays name, currency, currencyId and the optional
// walletOwnerId, index i describing wallet i.
func ParseCreate(raw map[string]any) ([]NewWallet, error) {
	p, err := readPayload(raw, "name", "currency", "currencyId", "walletOwnerId")
	if err != nil {
		return nil, err
	}
	cols, n, err := createColumns(p)
	if err != nil {
		return nil, err
	}
	out := make([]NewWallet, n)
	for i := range n {
		if out[i], err = newWallet(i, cols["name"][i], cols["currency"][i], cols["currencyId"][i], cols["walletOwnerId"][i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// createColumns returns the four columns of a create payload, all of the same length n
// (1..20); an absent or empty walletOwnerId becomes a column of empty owners.
func createColumns(p payload) (map[string][]string, int, error) {
	cols := map[string][]string{}
	var err error
	for _, field := range []string{"name", "currency", "currencyId"} {
		if cols[field], err = p.required(field); err != nil {
			return nil, 0, err
		}
	}
	n := len(cols["name"])
	if n > MaxWalletsPerRequest {
		return nil, 0, apperr.Invalid(apperr.CodeLength, "name", "a request creates 1 to %d wallets, got %d", MaxWalletsPerRequest, n)
	}
	cols["walletOwnerId"] = p["walletOwnerId"]
	if len(cols["walletOwnerId"]) == 0 || slices.Equal(cols["walletOwnerId"], []string{""}) {
		cols["walletOwnerId"] = make([]string, n) // no owners: every wallet is NOBENF
	}
	for _, field := range []string{"currency", "currencyId", "walletOwnerId"} {
		if len(cols[field]) != n {
			return nil, 0, apperr.Invalid(apperr.CodeLength, field, "%s holds %d values, name holds %d: index i describes wallet i", field, len(cols[field]), n)
		}
	}
	return cols, n, nil
}

func newWallet(i int, name, code, currencyID, owner string) (NewWallet, error) {
	if err := CheckName(fmt.Sprintf("name[%d]", i), name); err != nil {
		return NewWallet{}, err
	}
	cur, ok := ledger.ByID(currencyID)
	if !ok {
		return NewWallet{}, apperr.Invalid(apperr.CodeCurrency, "currencyId", "currencyId[%d] %q is not a supported currency", i, currencyID)
	}
	if code != cur.Code {
		return NewWallet{}, apperr.Invalid(apperr.CodeFormat, "currency", "currency[%d] %q does not match currencyId %s (currency %s)", i, code, currencyID, cur.Code)
	}
	if err := checkOwner(i, owner); err != nil {
		return NewWallet{}, err
	}
	return NewWallet{Name: name, Currency: cur, OwnerID: owner}, nil
}

// CheckName validates a wallet name: 1..128 characters of letters, digits, spaces and
// hyphens, not only spaces. label names the value in the message (e.g. name[2]).
func CheckName(label, name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxNameLen {
		return apperr.Invalid(apperr.CodeLength, "name", "%s must be 1 to %d characters, got %d", label, MaxNameLen, n)
	}
	if !namePattern.MatchString(name) {
		return apperr.Invalid(apperr.CodeFormat, "name", "%s must match ^[a-zA-Z0-9 -]+$", label)
	}
	if strings.TrimSpace(name) == "" {
		return apperr.Invalid(apperr.CodeBlank, "name", "%s is blank", label)
	}
	return nil
}

// checkOwner validates an optional walletOwnerId: it becomes part of the wallet id.
func checkOwner(i int, owner string) error {
	if owner == "" {
		return nil
	}
	if len(owner) > MaxOwnerIDLen {
		return apperr.Invalid(apperr.CodeLength, "walletOwnerId", "walletOwnerId[%d] must be at most %d characters", i, MaxOwnerIDLen)
	}
	if !ownerPattern.MatchString(owner) || owner == NoBeneficiary {
		return apperr.Invalid(apperr.CodeFormat, "walletOwnerId", "walletOwnerId[%d] must hold only letters, digits and hyphens", i)
	}
	return nil
}

// ParseRename reads a 0x0013-002 payload: one walletId and its new name.
func ParseRename(raw map[string]any) (Rename, error) {
	p, err := readPayload(raw, "walletId", "name")
	if err != nil {
		return Rename{}, err
	}
	id, err := walletID(p)
	if err != nil {
		return Rename{}, err
	}
	name, err := p.single("name")
	if err != nil {
		return Rename{}, err
	}
	if err := CheckName("name", name); err != nil {
		return Rename{}, err
	}
	return Rename{WalletID: id, Name: name}, nil
}

// ParseDeactivate reads a 0x0013-003 payload: one walletId.
func ParseDeactivate(raw map[string]any) (string, error) {
	p, err := readPayload(raw, "walletId")
	if err != nil {
		return "", err
	}
	return walletID(p)
}

func walletID(p payload) (string, error) {
	id, err := p.single("walletId")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(id) == "" {
		return "", apperr.Invalid(apperr.CodeBlank, "walletId", "walletId is blank")
	}
	return id, nil
}
