package server

import (
	"context"
	"errors"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/catalog"
	reqpayload "github.com/zcustody/suite/services/internal/payload"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/trading"
)

// ServiceInstruction is the catalog service of a venue's settlement instruction (issue 18):
// a MAKER of the venue's operator requests it, a CHECKER authorises it, and its execution
// records a one-leg settlement at the venue, as endpoint 3 would, for the settlement engine
// to advance.
const ServiceInstruction = catalog.SettlementInstruction

// InstructionHandler is the plugin handler of 0x0003-003.
func (s *Server) InstructionHandler() plugin.Handler {
	return plugin.Handler{Validate: s.validateInstruction, Execute: s.executeInstruction}
}

// validateInstruction checks the payload, the venue (one the requesting company operates)
// and the client's wallet, without storing anything. The entity id is the settlement's
// request id: the service request's id. It reports the request to the approval policy:
// money out of the sender (the client's wallet for a receivable, the venue's settlement
// wallet for a payable), in the leg's currency, worth its USD value; no destination kind (it
// moves money between trading wallets at the venue).
func (s *Server) validateInstruction(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	in, wallets, rename, err := s.requestedInstruction(sr)
	if err != nil {
		return nil, err
	}
	if err := s.deps.Settlements.Check(ctx, in, wallets); err != nil {
		return nil, rename(err)
	}
	details, err := instructionDetails(in, nil)
	if err != nil {
		return nil, err
	}
	l := in.Legs[0]
	sender, amount := l.WalletID, l.Amount
	if payable, ok := strings.CutPrefix(l.Amount, "-"); ok {
		sender, amount = trading.VenueWalletID(in.VenueID, l.Currency), payable
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{in.RequestID}, Details: details,
		Subject: s.policySubject(ctx, sender, l.Currency, amount, "")}, nil
}

// executeInstruction records the settlement (idempotent by its request id: a repeated
// execution answers the one recorded).
func (s *Server) executeInstruction(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	if len(entityIDs) != 1 || entityIDs[0] != sr.GetRequestId() {
		return nil, apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds must hold the request's own id, the settlement's request id")
	}
	in, wallets, rename, err := s.requestedInstruction(sr)
	if err != nil {
		return nil, err
	}
	stored, err := s.deps.Settlements.Create(ctx, in, wallets)
	if err != nil {
		return nil, rename(err)
	}
	details, err := instructionDetails(stored, &stored)
	if err != nil {
		return nil, err
	}
	return &pluginv1.ExecuteResponse{EntityIds: []string{stored.RequestID}, Details: details}, nil
}

// requestedInstruction is the settlement a 0x0003-003 request describes, and the reader of
// the venue's wallets as its operator sees them.
//
// Payload: {"sender":{"type":"WALLETID","value":…},"destination":{"type":"WALLETID","value":…},
// "currency":"BTC","venueId":"BYBIT","amount":"0.1","subtractFee":false, "ledger":"BTC"}. One
// side is a client's trading wallet at the venue, the other the venue's settlement wallet
// (<venueId>-ISW-<currency>): from the client to the venue is a receivable, from the venue
// to the client a payable. `ledger` is needed only for a currency on several ledgers (USDC,
// EURC); `subtractFee` must be false (fees have no accounts yet).
//
// It also returns how to rename, in the settlement checks' refusals (which name the leg's
// fields), the fields to the payload's.
func (s *Server) requestedInstruction(sr *pluginv1.ServiceRequest) (settlement.Settlement, settlement.Wallets, func(error) error, error) {
	p := plugin.Payload(sr)
	if err := reqpayload.CheckKeys("", p, "sender", "destination", "currency", "venueId", "amount", "subtractFee", "ledger"); err != nil {
		return settlement.Settlement{}, nil, nil, err
	}
	venue, err := reqpayload.Text(p, "venueId")
	if err != nil {
		return settlement.Settlement{}, nil, nil, err
	}
	if err := checkID("venueId", venue, codePattern); err != nil {
		return settlement.Settlement{}, nil, nil, err
	}
	if !slices.Contains(sr.GetVenueIds(), venue) {
		return settlement.Settlement{}, nil, nil, apperr.ForbiddenField("venueId", "venueId %s is not a venue that company %s operates", venue, sr.GetCompanyId())
	}
	leg, side, err := instructedLeg(p, venue)
	if err != nil {
		return settlement.Settlement{}, nil, nil, err
	}
	inPayload := payloadFields(side)
	req := &interchangev1.CreateSettlementRequest{
		Header:      &interchangev1.SettlementHeader{VenueId: venue, SettlementRequestId: sr.GetRequestId(), InstructionCount: 1},
		Settlements: []*interchangev1.Settlement{leg},
	}
	in, err := ParseInstruction(sr.GetCompanyId(), req, s.deps.Rules)
	if err != nil {
		return settlement.Settlement{}, nil, nil, inPayload(err)
	}
	wallets, err := s.walletsFor(sr.GetCompanyId(), sr.GetVenueIds()...)
	return in, wallets, inPayload, err
}

// payloadFields renames, in an error about the instruction's one leg, the leg's fields to the
// payload's: its counterparty is the payload's side (sender or destination) that names the
// client's wallet.
func payloadFields(side string) func(error) error {
	names := map[string]string{"settlements[0].counterparty.value": side + ".value", "settlements[0].amount": "amount",
		"settlements[0].currency": "currency", "settlements[0].ledger": "ledger"}
	return func(err error) error {
		var e *apperr.Error
		if !errors.As(err, &e) {
			return err
		}
		name, ok := names[e.Field]
		if !ok {
			return err
		}
		renamed := *e
		renamed.Field, renamed.Message = name, strings.ReplaceAll(e.Message, e.Field, name)
		return &renamed
	}
}

// instructedLeg reads the payload's one leg, seen from the client's wallet.
func instructedLeg(p map[string]any, venue string) (*interchangev1.Settlement, string, error) {
	if fee, ok := p["subtractFee"]; ok && fee != nil && fee != false {
		return nil, "", apperr.Invalid(apperr.CodeFormat, "subtractFee", "subtractFee must be false: fees are not charged on settlements yet")
	}
	currency, err := reqpayload.Text(p, "currency")
	if err != nil {
		return nil, "", err
	}
	curs := currenciesOf(currency)
	if len(curs) == 0 {
		return nil, "", apperr.Invalid(apperr.CodeCurrency, "currency", "currency %q is not supported", currency)
	}
	ledgerCode := curs[0].Ledger
	if _, given := p["ledger"]; given || len(curs) > 1 {
		if ledgerCode, err = reqpayload.Text(p, "ledger"); err != nil {
			return nil, "", err
		}
	}
	amount, err := reqpayload.Text(p, "amount")
	if err != nil {
		return nil, "", err
	}
	sender, err := walletRef(p, "sender")
	if err != nil {
		return nil, "", err
	}
	destination, err := walletRef(p, "destination")
	if err != nil {
		return nil, "", err
	}
	venueWallet := trading.VenueWalletID(venue, currency)
	var client, signed, side string
	switch {
	case destination == venueWallet && sender != venueWallet:
		client, signed, side = sender, amount, "sender" // the client pays the venue: a receivable
	case sender == venueWallet && destination != venueWallet:
		client, signed, side = destination, "-"+amount, "destination" // the venue pays the client: a payable
	default:
		return nil, "", apperr.Invalid(apperr.CodeFormat, "destination.value",
			"destination.value: one side of an instruction is the venue's settlement wallet %s, the other a client's trading wallet", venueWallet)
	}
	if _, err := parseAmount("amount", amount, currencyPlaces(currency), false); err != nil {
		return nil, "", err
	}
	return &interchangev1.Settlement{Counterparty: &interchangev1.Counterparty{Type: settlement.CounterpartyWallet, Value: client},
		Currency: currency, Ledger: ledgerCode, Amount: signed}, side, nil
}

// instructionDetails is what the service request shows of its settlement (with its tracking
// id and status once stored).
func instructionDetails(in settlement.Settlement, stored *settlement.Settlement) ([]*structpb.Struct, error) {
	l := in.Legs[0]
	d := map[string]any{"settlementRequestId": in.RequestID, "venueId": in.VenueID, "counterparty": l.WalletID,
		"currency": l.Currency, "ledger": l.Ledger, "amount": l.Amount}
	if stored != nil {
		d["settlementTrackingId"], d["status"] = stored.TrackingID, stored.Status
	}
	details, err := structpb.NewStruct(d)
	return []*structpb.Struct{details}, err
}
