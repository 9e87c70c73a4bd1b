package custody

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/ledger"
)

// BaseReserveXLM is Stellar's base reserve: each account entry and subentry locks 0.5 XLM.
const BaseReserveXLM = "0.5"

var baseReserve = decimal.RequireFromString(BaseReserveXLM)

// Trustline is what activating an asset adds to a Stellar wallet.
type Trustline struct {
	Balance AssetBalance // the asset's zero balance entry
	// MinimumBalanceXLM is the account's minimum balance once the trustline exists,
	// (2 + subentries) × 0.5 XLM counting the new trustline, canonical decimal.
	MinimumBalanceXLM string
}

// TrustlineReserve is the XLM a wallet with subentries subentries must hold available to add
// one more trustline: (2 + subentries + 1) × 0.5, exact.
func TrustlineReserve(subentries int) decimal.Decimal {
	return decimal.NewFromInt(int64(2 + subentries + 1)).Mul(baseReserve)
}

// TrustlineAsset returns the asset currencyID names if a trustline can hold it: a supported
// (ER-111), non-native (ER-108) Stellar (ER-111) asset.
func TrustlineAsset(currencyID string) (ledger.Currency, error) {
	if strings.TrimSpace(currencyID) == "" {
		return ledger.Currency{}, apperr.Missing("currencyId")
	}
	cur, ok := ledger.ByID(currencyID)
	switch {
	case !ok:
		return cur, apperr.Invalid(apperr.CodeCurrency, "currencyId", "currencyId %q is not a supported currency", currencyID)
	case cur.Ledger != ledger.XLM:
		return cur, apperr.Invalid(apperr.CodeCurrency, "currencyId", "trustlines exist only for Stellar assets; %s is on %s", currencyID, cur.Ledger)
	case cur.Native:
		return cur, apperr.Invalid(apperr.CodeFormat, "currencyId", "%s is Stellar's native asset and needs no trustline", currencyID)
	}
	return cur, nil
}

// PlanTrustline checks that w can take a trustline for cur now and returns it: an ACTIVE
// Stellar wallet (ER-111 for another ledger; 409 ER-113/ER-409 for a deactivated or pending
// one) without that asset yet (409 ER-104) whose available XLM covers the reserve (409
// ER-409, naming the required and available amounts).
func PlanTrustline(w Wallet, cur ledger.Currency) (Trustline, error) {
	if w.Blockchain != ledger.XLM {
		return Trustline{}, apperr.Invalid(apperr.CodeCurrency, "walletId", "wallet %s is on %s; trustlines exist only on Stellar (XLM) wallets", w.ID, w.Blockchain)
	}
	if err := CheckChangeable(w); err != nil {
		return Trustline{}, err
	}
	if _, ok := w.Balance(cur.CurrencyID); ok {
		return Trustline{}, apperr.ConflictOn(apperr.CodeExists, "currencyId", "the trustline for %s is already active on wallet %s", cur.CurrencyID, w.ID)
	}
	if err := checkReserve(w, cur); err != nil {
		return Trustline{}, err
	}
	zero, err := NewAssetBalance(cur, Amounts{})
	if err != nil {
		return Trustline{}, err
	}
	return Trustline{Balance: zero, MinimumBalanceXLM: TrustlineReserve(w.Subentries).String()}, nil
}

func checkReserve(w Wallet, cur ledger.Currency) error {
	available, err := w.availableXLM()
	if err != nil {
		return err
	}
	required := TrustlineReserve(w.Subentries)
	if available.GreaterThanOrEqual(required) {
		return nil
	}
	return apperr.ConflictOn(apperr.CodeConflict, "walletId", "insufficient XLM reserve to activate %s on wallet %s: required %s XLM ((2 + %d subentries + 1) × %s XLM), available %s XLM",
		cur.CurrencyID, w.ID, required, w.Subentries, BaseReserveXLM, available)
}

// availableXLM is the wallet's available native XLM (zero without an xlm-xlm entry).
func (w Wallet) availableXLM() (decimal.Decimal, error) {
	native, _ := ledger.NativeOf(ledger.XLM)
	b, ok := w.Balance(native.CurrencyID)
	if !ok {
		return decimal.Zero, nil
	}
	d, err := decimal.NewFromString(b.AvailableBalance)
	if err != nil {
		return decimal.Zero, fmt.Errorf("wallet %s: stored XLM balance %q: %w", w.ID, b.AvailableBalance, err)
	}
	return d, nil
}

// Balance returns the wallet's balance entry of currencyID.
func (w Wallet) Balance(currencyID string) (AssetBalance, bool) {
	for _, b := range w.AssetBalances {
		if b.CurrencyID == currencyID {
			return b, true
		}
	}
	return AssetBalance{}, false
}
