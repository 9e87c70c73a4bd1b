package server

import (
	"context"
	"errors"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/trading"
)

// create inserts the wallet under its reserved id and generates its vault addresses. Every
// step is safe to repeat: a taken id returns the stored wallet, an address already generated
// for the wallet and currency is kept. The response is built from what is stored, so every
// run answers the same.
func (p *Plugin) create(ctx context.Context, r *pluginv1.ServiceRequest, c trading.CreateWallet, id string) (*pluginv1.ExecuteResponse, error) {
	createdBy := r.GetMakerEmail()
	if createdBy == "" {
		createdBy = r.GetCompanyId()
	}
	w, err := p.store.InsertWallet(ctx, c.NewWallet(id, r.GetCompanyId(), createdBy, r.GetRequestId(), p.now()))
	if err != nil {
		return nil, err
	}
	if w.RequestID != r.GetRequestId() || w.CompanyID != r.GetCompanyId() {
		return nil, apperr.Conflict(apperr.CodeExists, "wallet %s already exists", id)
	}
	owner := trading.Party{ID: w.CompanyID, Name: r.GetCompanyName()}
	addrs, err := trading.NewVaultAddresses(w, owner, p.custodian, p.key, p.now())
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if _, err := p.store.InsertAddress(ctx, a); err != nil {
			return nil, err
		}
	}
	stored, err := p.store.WalletAddresses(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	list := make([]any, 0, len(stored))
	for _, a := range stored {
		list = append(list, map[string]any{"address": a.Address, "ledger": a.Ledger, "currencyId": a.CurrencyID})
	}
	return executed(w.ID, map[string]any{"walletId": w.ID, "name": w.Name, "currency": w.Currency, "tradingVenueId": w.VenueID,
		"status": w.Status, "accountUuid": c.AccountUUID, "userUuid": c.UserUUID, "addresses": list})
}

// deactivate deactivates the company's wallet with one conditional update guarded by status
// and version. A wallet this request already deactivated answers as success; a wallet
// changed concurrently is read again once.
func (p *Plugin) deactivate(ctx context.Context, companyID, walletID, requestID string) (*pluginv1.ExecuteResponse, error) {
	for attempt := 0; ; attempt++ {
		w, err := p.store.Wallet(ctx, companyID, walletID)
		if errors.Is(err, apperr.ErrNotFound) {
			return nil, apperr.NotFound("walletId", walletID)
		}
		if err != nil {
			return nil, err
		}
		if w.DeactivatedBy != requestID {
			if err := w.CheckActive(); err != nil {
				return nil, err
			}
			w, err = p.store.Deactivate(ctx, w, requestID)
			if errors.Is(err, apperr.ErrConflict) && attempt == 0 {
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		return executed(w.ID, map[string]any{"walletId": w.ID, "status": w.Status})
	}
}
