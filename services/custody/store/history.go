package store

import "context"

// WalletCurrencies returns the currency ids of the assets of the company's wallet walletID
// (its journal accounts' keys), for the statement extensions; apperr.ErrNotFound when it is
// not the company's.
func (s *Store) WalletCurrencies(ctx context.Context, companyID, walletID string) ([]string, error) {
	w, err := s.Wallet(ctx, companyID, walletID)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(w.AssetBalances))
	for _, b := range w.AssetBalances {
		out = append(out, b.CurrencyID)
	}
	return out, nil
}
