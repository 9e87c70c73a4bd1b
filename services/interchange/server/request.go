package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/ids"
	reqpayload "github.com/zcustody/suite/services/internal/payload"
	"github.com/zcustody/suite/services/internal/plugin"
)

// ServiceWithdrawal is the catalog service of a client's withdrawal from one of its trading
// wallets to one of its custody wallets (issue 18): a MAKER requests it, a CHECKER
// authorises it, and its execution creates the withdrawal, holding the amount, for the
// wallet's venue to decide (endpoint 11).
const ServiceWithdrawal = catalog.TradingWithdrawal

// WalletIDType is the one `type` a withdrawal request's sender and destination take.
const WalletIDType = "WALLETID"

// transferIDSuffix is the length of the random part of a requested withdrawal's transfer id.
const transferIDSuffix = 10

// CustodyTargets checks the custody wallet a withdrawal credits (funds.Custody).
type CustodyTargets interface {
	// CheckTarget refuses a wallet that is not company's, not ACTIVE, or does not carry the
	// currency, and an amount finer than its asset's unit; the errors name field.
	CheckTarget(ctx context.Context, field, company, walletID, currency, amount string) error
}

// WithdrawalRequest is a validated 0x0003-004 payload.
type WithdrawalRequest struct {
	Sender      string // the company's trading wallet
	Destination string // the company's custody wallet
	Amount      string // positive canonical decimal
}

// ParseWithdrawalRequest validates a 0x0003-004 payload:
// {"sender":{"type":"WALLETID","value":<trading wallet id>},
// "destination":{"type":"WALLETID","value":<custody wallet id>},"amount":"<decimal>"}.
// Strings may come as "x" or ["x"] (the catalog template's form). The amount is checked
// against the wallets' currency later.
func ParseWithdrawalRequest(payload map[string]any) (WithdrawalRequest, error) {
	if err := reqpayload.CheckKeys("", payload, "sender", "destination", "amount"); err != nil {
		return WithdrawalRequest{}, err
	}
	var r WithdrawalRequest
	var err error
	if r.Sender, err = walletRef(payload, "sender"); err != nil {
		return r, err
	}
	if r.Destination, err = walletRef(payload, "destination"); err != nil {
		return r, err
	}
	if r.Amount, err = reqpayload.Text(payload, "amount"); err != nil {
		return r, err
	}
	return r, nil
}

// walletRef reads {"type":"WALLETID","value":<wallet id>} under field.
func walletRef(payload map[string]any, field string) (string, error) {
	raw, ok := payload[field]
	if !ok || raw == nil {
		return "", apperr.Missing(field)
	}
	ref, ok := raw.(map[string]any)
	if !ok {
		return "", apperr.Invalid(apperr.CodeFormat, field, `%s must be an object {"type":"%s","value":<wallet id>}`, field, WalletIDType)
	}
	if err := reqpayload.CheckKeys(field+".", ref, "type", "value"); err != nil {
		return "", err
	}
	kind, err := reqpayload.Text(ref, "type")
	if err != nil {
		return "", qualify(err, field)
	}
	if kind != WalletIDType {
		return "", apperr.Invalid(apperr.CodeFormat, field+".type", "%s.type must be %s", field, WalletIDType)
	}
	id, err := reqpayload.Text(ref, "value")
	if err != nil {
		return "", qualify(err, field)
	}
	return id, checkID(field+".value", id, requestIDPattern)
}

// qualify prefixes the field an error of a nested object names.
func qualify(err error, prefix string) error {
	if e, ok := err.(*apperr.Error); ok && e.Field != "" {
		q := *e
		q.Field = prefix + "." + e.Field
		if e.Code == apperr.CodeMissing {
			q.Message = "Missing mandatory field: " + q.Field
		}
		return &q
	}
	return err
}

// WithdrawalHandler is the plugin handler of 0x0003-004 (plugin.Server runs Execute once
// per request id).
func (s *Server) WithdrawalHandler() plugin.Handler {
	return plugin.Handler{Validate: s.validateWithdrawal, Execute: s.executeWithdrawal}
}

// validateWithdrawal checks the payload, the company's sender and destination wallets and
// the amount against them, and reserves the transfer id. It writes nothing (it reads the
// wallets and trading's prices); the funds are held when the request is executed. It
// reports the request to the approval policy: money out of the sender trading wallet, in its
// currency, worth its USD value, to one of the company's own custody wallets.
func (s *Server) validateWithdrawal(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	w, err := s.requestedWithdrawal(sr, fmt.Sprintf("TWD-%s-%s", sr.GetCompanyId(), ids.Random(transferIDSuffix)))
	if err != nil {
		return nil, err
	}
	if w, err = s.checkRequested(ctx, w); err != nil {
		return nil, err
	}
	details, err := structpb.NewStruct(withdrawalDetails(w, ""))
	if err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{w.TransferID}, Details: []*structpb.Struct{details},
		Subject: s.policySubject(ctx, w.WalletID, w.Currency, w.Amount, catalog.DestinationOwnCustody)}, nil
}

// policySubject is what a request is for the company's approval policy: the wallet money
// leaves, its currency, the amount's value in US dollars ("" without a recent price) and the
// kind of its destination ("" for none).
func (s *Server) policySubject(ctx context.Context, wallet, currency, amount, destination string) *pluginv1.PolicySubject {
	subject := &pluginv1.PolicySubject{WalletId: wallet, Currency: currency, Destination: destination}
	if s.deps.Prices != nil {
		subject.UsdValue = s.deps.Prices.USDValue(ctx, currency, amount)
	}
	return subject
}

// executeWithdrawal creates the withdrawal under the reserved transfer id and holds its
// amount. The wallets are checked again for a new withdrawal (they may have changed since
// the request was made); a repeat answers the one created.
func (s *Server) executeWithdrawal(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	if len(entityIDs) != 1 || !requestedTransferID(sr.GetCompanyId()).MatchString(entityIDs[0]) {
		return nil, apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds must hold the transfer id reserved for the request")
	}
	w, err := s.requestedWithdrawal(sr, entityIDs[0])
	if err != nil {
		return nil, err
	}
	sender, err := s.senderWallet(ctx, w)
	if err != nil {
		return nil, err
	}
	w.Currency = sender.Currency
	stored, err := s.deps.Withdrawals.Create(ctx, w, func(ctx context.Context, w withdrawal.Withdrawal) (string, error) {
		checked, err := s.checkRequested(ctx, w)
		return checked.VenueID, err
	})
	if err != nil {
		return nil, retryUnlessRefused(err)
	}
	details, err := structpb.NewStruct(withdrawalDetails(stored, stored.Status))
	if err != nil {
		return nil, err
	}
	return &pluginv1.ExecuteResponse{EntityIds: []string{stored.TransferID}, Details: []*structpb.Struct{details}}, nil
}

// retryUnlessRefused passes a refusal on (the request fails with it) and turns any other
// error into 503, which the service desk retries for as long as it takes: the withdrawal may
// already be stored, so its request must not be recorded FAILED while the withdrawal lives
// on (a repeat completes it, or finds it declined by its expiry).
func retryUnlessRefused(err error) error {
	var e *apperr.Error
	if errors.As(err, &e) && e.Status != codes.Internal && e.Status != codes.Unknown {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &apperr.Error{Status: codes.Unavailable, Code: apperr.CodeUnavailable, Message: "the withdrawal cannot be completed now; the service desk retries it"}
}

// requestedWithdrawal is the withdrawal a request asks for, under transferID; its currency
// and venue are the sender wallet's (checkRequested).
func (s *Server) requestedWithdrawal(sr *pluginv1.ServiceRequest, transferID string) (withdrawal.Withdrawal, error) {
	r, err := ParseWithdrawalRequest(plugin.Payload(sr))
	if err != nil {
		return withdrawal.Withdrawal{}, err
	}
	return withdrawal.Withdrawal{TransferID: transferID, CompanyID: sr.GetCompanyId(), WalletID: r.Sender, Amount: r.Amount,
		DestinationWalletID: r.Destination, RequestID: sr.GetRequestId()}, nil
}

// senderWallet reads a requested withdrawal's trading wallet as its company's: one the
// company does not hold (another company's included) is 404 ER-102.
func (s *Server) senderWallet(ctx context.Context, w withdrawal.Withdrawal) (settlement.Wallet, error) {
	wallets, err := s.walletsFor(w.CompanyID)
	if err != nil {
		return settlement.Wallet{}, err
	}
	found, err := wallets.Wallets(ctx, []string{w.WalletID})
	if err != nil {
		return settlement.Wallet{}, err
	}
	tw, ok := found[w.WalletID]
	if !ok {
		return settlement.Wallet{}, apperr.NotFound("sender.value", w.WalletID)
	}
	return tw, nil
}

// checkRequested checks a requested withdrawal's wallets and returns it with the sender's
// currency and venue: the sender an ACTIVE trading wallet of the company held at a venue,
// the amount a positive canonical decimal no finer than its currency, the destination a
// custody wallet of the company that can take it (custody checks: ACTIVE, carrying the
// currency, the amount no finer than its asset).
func (s *Server) checkRequested(ctx context.Context, w withdrawal.Withdrawal) (withdrawal.Withdrawal, error) {
	tw, err := s.senderWallet(ctx, w)
	switch {
	case err != nil:
		return w, err
	case tw.Status != settlement.WalletActive:
		return w, apperr.Precondition(apperr.CodeDeactivated, "sender.value", "sender.value: trading wallet %s is %s", w.WalletID, tw.Status)
	case tw.VenueID == "":
		return w, apperr.Invalid(apperr.CodeFormat, "sender.value", "sender.value: trading wallet %s is held at no venue: nobody could decide its withdrawal", w.WalletID)
	case w.Currency != "" && w.Currency != tw.Currency:
		return w, apperr.Invalid(apperr.CodeFormat, "sender.value", "sender.value: trading wallet %s holds %s, not %s", w.WalletID, tw.Currency, w.Currency)
	}
	if _, err := parseAmount("amount", w.Amount, currencyPlaces(tw.Currency), false); err != nil {
		return w, err
	}
	if err := s.deps.Custody.CheckTarget(ctx, "destination.value", w.CompanyID, w.DestinationWalletID, tw.Currency, w.Amount); err != nil {
		return w, err
	}
	w.Currency, w.VenueID = tw.Currency, tw.VenueID
	return w, nil
}

// currencyPlaces is the finest number of decimals a currency code has on any ledger.
func currencyPlaces(code string) int32 {
	places := int32(0)
	for _, c := range currenciesOf(code) {
		places = max(places, c.Decimals)
	}
	return places
}

func requestedTransferID(company string) *regexp.Regexp {
	return regexp.MustCompile(`^TWD-` + regexp.QuoteMeta(company) + `-[A-Z0-9]{10}$`)
}

// withdrawalDetails is what the service request shows of its withdrawal.
func withdrawalDetails(w withdrawal.Withdrawal, status string) map[string]any {
	d := map[string]any{"transferId": w.TransferID, "sender": w.WalletID, "destination": w.DestinationWalletID, "amount": w.Amount}
	if w.Currency != "" {
		d["currency"] = w.Currency
	}
	if w.VenueID != "" {
		d["venueId"] = w.VenueID
	}
	if status != "" {
		d["status"] = status
	}
	return d
}
