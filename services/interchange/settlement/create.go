package settlement

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/principal"
)

// NewTrackingID returns a fresh settlement tracking id, STL- plus 16 alphanumerics.
func NewTrackingID() string { return "STL-" + ids.Random(16) }

// CreateSettlement serves endpoint 3 for the caller's company. It is idempotent by the
// company's settlementRequestId: the same instruction again gets the first answer, another
// instruction under the same id is 409 ER-104. Racing creates may each validate, but only
// one settlement is stored and all get its answer. A client's own instruction holds
// receivables only (a payable is 403).
func (s *Service) CreateSettlement(ctx context.Context, req *interchangev1.CreateSettlementRequest) (*interchangev1.CreateSettlementResponse, error) {
	company, err := companyCaller(ctx, true)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, company, req, false, forwardCaller(ctx))
}

// create validates and stores an instruction for company; walletCtx reads its wallets
// from trading as that company.
func (s *Service) create(ctx context.Context, company string, req *interchangev1.CreateSettlementRequest, payables bool, walletCtx context.Context) (*interchangev1.CreateSettlementResponse, error) {
	in, err := ParseInstruction(company, req, s.rules(payables))
	if err != nil {
		return nil, err
	}
	stored, err := s.store.settlementByRequest(ctx, company, in.RequestID)
	if err == nil {
		return replay(stored, in)
	}
	if !errors.Is(err, apperr.ErrNotFound) {
		return nil, err
	}
	if err := s.checkWallets(walletCtx, in); err != nil {
		return nil, err
	}
	now := s.store.stamp()
	in.TrackingID, in.Status, in.Version, in.CreatedAt, in.UpdatedAt = NewTrackingID(), StatusReceived, 1, now, now
	in.PayInAttempt = 1
	in.History = []Step{{To: StatusReceived, At: now}}
	stored, inserted, err := s.store.insertSettlement(ctx, in)
	if err != nil {
		return nil, err
	}
	if !inserted {
		return replay(stored, in)
	}
	return firstAnswer(stored), nil
}

// replay answers a repeated request id: the first answer for the same instruction.
func replay(stored, in Settlement) (*interchangev1.CreateSettlementResponse, error) {
	if stored.BodyHash != in.BodyHash {
		return nil, &apperr.Error{Status: codes.AlreadyExists, Code: apperr.CodeExists, Field: "header.settlementRequestId",
			Message: fmt.Sprintf("header.settlementRequestId %s is already used by another instruction", in.RequestID)}
	}
	return firstAnswer(stored), nil
}

func firstAnswer(s Settlement) *interchangev1.CreateSettlementResponse {
	return &interchangev1.CreateSettlementResponse{SettlementRequestId: s.RequestID, SettlementTrackingId: s.TrackingID, Status: StatusReceived}
}

// tradingWallet is what a settlement needs to know of a trading wallet.
type tradingWallet struct {
	venueID, status, currency string
}

// checkWallets checks each leg's counterparty against trading: an ACTIVE trading wallet of
// the caller's company (else ER-102, or 409 ER-113 when deactivated) at the instruction's
// venue, in the leg's currency (else ER-108).
func (s *Service) checkWallets(ctx context.Context, in Settlement) error {
	found, err := s.lookupWallets(ctx, in.Legs)
	if err != nil {
		return err
	}
	for i, l := range in.Legs {
		field := fmt.Sprintf("settlements[%d].counterparty.value", i)
		w, ok := found[l.WalletID]
		switch {
		case !ok:
			return apperr.NotFound(field, l.WalletID)
		case w.venueID != in.VenueID:
			return apperr.Invalid(apperr.CodeFormat, field, "%s: wallet %s is held at venue %s, not %s", field, l.WalletID, w.venueID, in.VenueID)
		case w.status != "ACTIVE":
			return &apperr.Error{Status: codes.FailedPrecondition, Code: apperr.CodeDeactivated, Field: field,
				Message: fmt.Sprintf("%s: wallet %s is %s", field, l.WalletID, w.status)}
		case w.currency != l.Currency:
			return apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("settlements[%d].currency", i),
				"settlements[%d].currency %s: wallet %s holds %s", i, l.Currency, l.WalletID, w.currency)
		}
	}
	return nil
}

// lookupWallets reads the legs' wallets from trading in one call, in ctx (the caller's
// forwarded principal, or interchange acting for the company).
func (s *Service) lookupWallets(ctx context.Context, legs []Leg) (map[string]tradingWallet, error) {
	if s.deps.Wallets == nil {
		return nil, errors.New("trading wallets client is not wired")
	}
	var walletIDs []string
	for _, l := range legs {
		if !slices.Contains(walletIDs, l.WalletID) {
			walletIDs = append(walletIDs, l.WalletID)
		}
	}
	limit := int32(len(walletIDs))
	resp, err := s.deps.Wallets.SearchWallets(ctx, &tradingv1.SearchWalletsRequest{Ids: walletIDs, PaginationLimit: &limit})
	if err != nil {
		return nil, fmt.Errorf("read trading wallets: %w", err)
	}
	out := map[string]tradingWallet{}
	for _, w := range resp.GetItems() {
		out[w.GetId()] = tradingWallet{venueID: w.GetVenueId(), status: w.GetStatus(), currency: w.GetCurrency()}
	}
	return out, nil
}

// forwardCaller passes the caller's principal token on to trading as it arrived.
func forwardCaller(ctx context.Context) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	tokens := md.Get(principal.MetadataKey)
	if len(tokens) != 1 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, tokens[0])
}

// actingFor is a context in which interchange reads trading as company (the settlement
// engine's instructions name a client's wallets; trading scopes the read to it).
func (s *Service) actingFor(ctx context.Context, company string) (context.Context, error) {
	return s.deps.Signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: MovementSystem, CompanyID: company})
}
