package server

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/plugin"
)

// validateCreate checks a 0x0013-001 payload and the beneficiary each wallet names, and
// reserves one wallet id per wallet. It reports to the approval policy the currency of the
// wallets when they all share one (no wallet yet, no money moved).
func (p *Plugin) validateCreate(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	wallets, err := p.parseCreate(ctx, sr)
	if err != nil {
		return nil, err
	}
	resp := &pluginv1.ValidateResponse{Subject: &pluginv1.PolicySubject{Currency: wallets[0].Currency.Code}}
	for _, w := range wallets {
		resp.EntityIds = append(resp.EntityIds, custody.NewWalletID(sr.GetCompanyId(), w.OwnerID))
		resp.Details = append(resp.Details, createDetail(w, ""))
		if w.Currency.Code != resp.Subject.Currency {
			resp.Subject.Currency = ""
		}
	}
	return resp, nil
}

// executeCreate inserts the wallets under the ids Validate reserved. A wallet that already
// exists under its reserved id was inserted by an earlier run of this request.
func (p *Plugin) executeCreate(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	wallets, err := p.parseCreate(ctx, sr)
	if err != nil {
		return nil, err
	}
	if err := checkReserved(sr.GetCompanyId(), wallets, entityIDs); err != nil {
		return nil, err
	}
	now := p.now().UTC()
	resp := &pluginv1.ExecuteResponse{EntityIds: entityIDs}
	for i, nw := range wallets {
		w, err := custody.Open(custody.Opening{ID: entityIDs[i], Name: nw.Name, CompanyID: sr.GetCompanyId(),
			OwnerID: nw.OwnerID, CreatedBy: sr.GetMakerEmail(), CurrencyID: nw.Currency.CurrencyID,
			RequestID: sr.GetRequestId(), At: now})
		if err != nil {
			return nil, err
		}
		if err := p.insert(ctx, w); err != nil {
			return nil, err
		}
		resp.Details = append(resp.Details, createDetail(nw, w.ID))
	}
	return resp, nil
}

// parseCreate parses a 0x0013-001 payload and checks with compliance that each walletOwnerId
// names an active beneficiary of the requesting company (another company's, or a made-up
// id, is 404 ER-102; a deactivated one 409 ER-113): a wallet id embeds its owner's id, so
// it must be the company's own. Checked again at execution: the beneficiary may have been
// deactivated meanwhile.
func (p *Plugin) parseCreate(ctx context.Context, sr *pluginv1.ServiceRequest) ([]custody.NewWallet, error) {
	wallets, err := custody.ParseCreate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	for i, w := range wallets {
		if w.OwnerID == "" {
			continue
		}
		field := "walletOwnerId"
		if len(wallets) > 1 {
			field = fmt.Sprintf("walletOwnerId[%d]", i)
		}
		if _, err := p.owners.Beneficiary(ctx, field, sr.GetCompanyId(), w.OwnerID); err != nil {
			return nil, err
		}
	}
	return wallets, nil
}

// insert creates w; an existing wallet of the company under the same reserved id counts as
// created (a repeat after a crash, or a racing run of the same request).
func (p *Plugin) insert(ctx context.Context, w custody.Wallet) error {
	err := p.wallets.InsertWallet(ctx, w)
	if !errors.Is(err, apperr.ErrExists) {
		return err
	}
	if _, err := p.wallets.Wallet(ctx, w.CompanyID, w.ID); err != nil {
		if errors.Is(err, apperr.ErrNotFound) {
			return apperr.Conflict(apperr.CodeExists, "wallet id %s is taken", w.ID)
		}
		return err
	}
	return nil
}

// checkReserved checks the entity ids the service desk passes: one per wallet, each shaped
// as Validate reserves it for the company and the wallet's owner.
func checkReserved(companyID string, wallets []custody.NewWallet, entityIDs []string) error {
	if len(entityIDs) == 0 {
		return apperr.Missing("entityIds")
	}
	if len(entityIDs) != len(wallets) {
		return apperr.Invalid(apperr.CodeLength, "entityIds", "entityIds holds %d ids for %d wallets", len(entityIDs), len(wallets))
	}
	for i, w := range wallets {
		if err := custody.CheckReservedID(entityIDs[i], companyID, w.OwnerID); err != nil {
			return err
		}
	}
	return nil
}

// createDetail echoes one wallet of a 0x0013-001 payload (pluginDetail.details), with its
// id and status once created.
func createDetail(w custody.NewWallet, walletID string) *structpb.Struct {
	fields := map[string]*structpb.Value{
		"name":          structpb.NewStringValue(w.Name),
		"currency":      structpb.NewStringValue(w.Currency.Code),
		"currencyId":    structpb.NewStringValue(w.Currency.CurrencyID),
		"walletOwnerId": structpb.NewStringValue(w.OwnerID),
		"isDeFi":        structpb.NewBoolValue(false),
	}
	if walletID != "" {
		fields["walletId"] = structpb.NewStringValue(walletID)
		fields["status"] = structpb.NewStringValue(custody.StatusActive)
	}
	return &structpb.Struct{Fields: fields}
}
