package server

import (
	"context"
	"errors"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/internal/plugin"
)

// maxAttempts bounds how often a change re-reads a wallet that moved under it.
const maxAttempts = 3

// update is one conditional update of a wallet read at w.Version.
type update func(ctx context.Context, w custody.Wallet) (custody.Wallet, error)

func (p *Plugin) validateRename(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	r, err := custody.ParseRename(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	w, err := p.changeable(ctx, sr.GetCompanyId(), r.WalletID)
	if err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{r.WalletID},
		Details: []*structpb.Struct{changeDetail(r.WalletID, r.Name, custody.StatusActive)}, Subject: walletSubject(w)}, nil
}

func (p *Plugin) validateDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	id, err := custody.ParseDeactivate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	w, err := p.changeable(ctx, sr.GetCompanyId(), id)
	if err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{id},
		Details: []*structpb.Struct{changeDetail(id, w.Name, custody.StatusDeactivated)}, Subject: walletSubject(w)}, nil
}

// walletSubject is what a change of w is for the approval policy: the wallet it acts on and
// the code of its currency (btc-btc is BTC); it moves no money.
func walletSubject(w custody.Wallet) *pluginv1.PolicySubject {
	cur, _ := ledger.ByID(w.CurrencyID)
	return &pluginv1.PolicySubject{WalletId: w.ID, Currency: cur.Code}
}

func (p *Plugin) executeRename(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	r, err := custody.ParseRename(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	return p.change(ctx, sr, r.WalletID, entityIDs, func(ctx context.Context, w custody.Wallet) (custody.Wallet, error) {
		return p.wallets.Rename(ctx, w.CompanyID, w.ID, w.Version, sr.GetRequestId(), r.Name)
	})
}

func (p *Plugin) executeDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	id, err := custody.ParseDeactivate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	return p.change(ctx, sr, id, entityIDs, func(ctx context.Context, w custody.Wallet) (custody.Wallet, error) {
		return p.wallets.Deactivate(ctx, w.CompanyID, w.ID, w.Version, sr.GetRequestId())
	})
}

// change re-checks the wallet and applies apply, one conditional update guarded by the
// status and version just read. A wallet last changed by this very request (a racing or
// repeated run) answers as changed; a wallet that moved meanwhile is read again.
func (p *Plugin) change(ctx context.Context, sr *pluginv1.ServiceRequest, walletID string, entityIDs []string, apply update) (*pluginv1.ExecuteResponse, error) {
	if len(entityIDs) > 0 && !slices.Equal(entityIDs, []string{walletID}) {
		return nil, apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds %v do not name wallet %s", entityIDs, walletID)
	}
	for range maxAttempts {
		w, err := p.wallet(ctx, sr.GetCompanyId(), walletID)
		if err != nil {
			return nil, err
		}
		if w.LastRequestID != sr.GetRequestId() {
			if err := custody.CheckChangeable(w); err != nil {
				return nil, err
			}
			w, err = apply(ctx, w)
		}
		if errors.Is(err, apperr.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &pluginv1.ExecuteResponse{EntityIds: []string{w.ID},
			Details: []*structpb.Struct{changeDetail(w.ID, w.Name, w.Status)}}, nil
	}
	return nil, apperr.Conflict(apperr.CodeConflict, "wallet %s keeps changing concurrently; retry", walletID)
}

// changeable returns the company's wallet if it may be changed now.
func (p *Plugin) changeable(ctx context.Context, companyID, id string) (custody.Wallet, error) {
	w, err := p.wallet(ctx, companyID, id)
	if err != nil {
		return custody.Wallet{}, err
	}
	return w, custody.CheckChangeable(w)
}

// wallet returns the company's wallet; unknown and other companies' wallets answer ER-102.
func (p *Plugin) wallet(ctx context.Context, companyID, id string) (custody.Wallet, error) {
	w, err := p.wallets.Wallet(ctx, companyID, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return custody.Wallet{}, apperr.NotFound("walletId", id)
	}
	return w, err
}

// changeDetail describes a renamed or deactivated wallet (pluginDetail.details).
func changeDetail(walletID, name, status string) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{
		"walletId": structpb.NewStringValue(walletID),
		"name":     structpb.NewStringValue(name),
		"status":   structpb.NewStringValue(status),
	}}
}
