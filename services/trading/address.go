package trading

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/zcustody/suite/services/internal/genaddr"
	"github.com/zcustody/suite/services/internal/ledger"
)

// Party is the owner or the custodian of a generated address (named here for callers outside
// services, which cannot import services/internal).
type Party = genaddr.Party

// DefaultCustodian is the custodian named on generated addresses: the platform's operator,
// whose key signs them.
func DefaultCustodian() Party { return genaddr.DefaultCustodian() }

// VaultAddress is a deposit address generated for one currency of a trading wallet.
type VaultAddress struct {
	genaddr.Record
	CompanyID string
	Currency  string // currency code, e.g. USDC
	CreatedAt time.Time
}

// NewVaultAddresses generates and signs one address per currency of the wallet: every
// supported currency whose code is the wallet's (USDC gets one on ETH and one on XLM).
func NewVaultAddresses(w Wallet, owner, custodian Party, key ed25519.PrivateKey, now time.Time) ([]VaultAddress, error) {
	var out []VaultAddress
	for _, c := range ledger.Currencies() {
		if c.Code != w.Currency {
			continue
		}
		addr, err := ledger.Generate(c.Ledger)
		if err != nil {
			return nil, err
		}
		a := VaultAddress{Record: genaddr.Record{Address: addr, Ledger: c.Ledger, WalletID: w.ID, CurrencyID: c.CurrencyID,
			WalletOwner: owner, Custodian: custodian}, CompanyID: w.CompanyID, Currency: c.Code, CreatedAt: now}
		if err := a.Sign(key); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("vault addresses of %s: unsupported currency %q", w.ID, w.Currency)
	}
	return out, nil
}
