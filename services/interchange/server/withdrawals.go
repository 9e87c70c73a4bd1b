package server

import (
	"context"
	"regexp"
	"slices"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/ledger"
)

// ConfirmWithdrawal serves endpoint 11: the operator of a trading venue decides a pending
// withdrawal out of a wallet held there (withdrawal.Service.Confirm). A company that
// operates no venue, the wallet's client included, is 403 (Policy): collateral at a venue
// leaves only with the venue's decision. A withdrawal at another venue is 404.
func (s *Server) ConfirmWithdrawal(ctx context.Context, req *interchangev1.ConfirmWithdrawalRequest) (*interchangev1.ConfirmWithdrawalResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	id, decision, reason, err := parseDecision(req)
	if err != nil {
		return nil, err
	}
	w, err := s.deps.Withdrawals.Confirm(ctx, p.Venues(), id, decision, reason, req.GetNetworkFee())
	if err != nil {
		return nil, err
	}
	return &interchangev1.ConfirmWithdrawalResponse{TransferId: w.TransferID}, nil
}

// SearchWithdrawals serves the withdrawal search extension: a venue's operator sees the
// withdrawals out of the wallets at its venues (of every client, without the client's
// service request and custody wallet ids), a client those out of its own wallets; filtered (values OR-ed within a filter, filters AND-ed, exact), paged and
// sorted by id (the transfer id), createdAt or updatedAt.
func (s *Server) SearchWithdrawals(ctx context.Context, req *interchangev1.SearchWithdrawalsRequest) (*interchangev1.SearchWithdrawalsResponse, error) {
	v, err := viewer(ctx)
	if err != nil {
		return nil, err
	}
	f := withdrawal.Filter{CompanyID: v.CompanyID, Venues: v.Venues}
	err = parseSearch(req.PaginationLimit, req.PaginationOffset, req.GetSort(), &f.Page,
		filterField{"transferIds", req.GetTransferIds(), &f.TransferIDs, nil},
		filterField{"walletIds", req.GetWalletIds(), &f.WalletIDs, nil},
		filterField{"statuses", req.GetStatuses(), &f.Statuses, withdrawal.Statuses()},
		filterField{"venueIds", req.GetVenueIds(), &f.VenueIDs, nil})
	if err != nil {
		return nil, err
	}
	items, total, err := s.deps.Withdrawals.Search(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &interchangev1.SearchWithdrawalsResponse{Total: int32(total), Items: make([]*interchangev1.WithdrawalRecord, 0, len(items))}
	for _, w := range items {
		if w.CompanyID != v.CompanyID {
			// The venue sees the withdrawal, not the client's service request or custody wallet.
			w.RequestID, w.DestinationWalletID = "", ""
		}
		resp.Items = append(resp.Items, withdrawalRecord(w))
	}
	return resp, nil
}

func withdrawalRecord(w withdrawal.Withdrawal) *interchangev1.WithdrawalRecord {
	out := &interchangev1.WithdrawalRecord{TransferId: w.TransferID, CompanyId: w.CompanyID, WalletId: w.WalletID, VenueId: w.VenueID,
		Currency: w.Currency, Amount: w.Amount, DestinationAddress: w.DestinationAddress, DestinationWalletId: w.DestinationWalletID,
		RequestId: w.RequestID, Status: w.Status, Reason: w.Reason, CreatedAt: apitime.Format(w.CreatedAt),
		UpdatedAt: apitime.Format(w.UpdatedAt), Completed: !w.CompletedAt.IsZero(), NetworkFeeLimit: w.NetworkFeeLimit, NetworkFee: w.NetworkFee}
	if !w.DecidedAt.IsZero() {
		out.DecidedAt = apitime.Format(w.DecidedAt)
	}
	return out
}

var tradingWalletSuffix = regexp.MustCompile(`^-TW-[A-Z0-9]{10}$`)

// ParseWithdrawal validates CreateWithdrawal: a transfer id, the company and one of its
// trading wallet ids (<COMPANY>-TW-<10>), a supported currency, a positive canonical amount
// no finer than the currency's base unit, and a destination address valid on one of the
// currency's ledgers.
func ParseWithdrawal(req *interchangev1.CreateWithdrawalRequest) (withdrawal.Withdrawal, error) {
	w := withdrawal.Withdrawal{TransferID: req.GetTransferId(), CompanyID: req.GetCompanyId(), WalletID: req.GetWalletId(),
		Currency: req.GetCurrency(), Amount: req.GetAmount(), DestinationAddress: req.GetDestinationAddress()}
	if err := checkID("transferId", w.TransferID, requestIDPattern); err != nil {
		return withdrawal.Withdrawal{}, err
	}
	if err := checkID("companyId", w.CompanyID, codePattern); err != nil {
		return withdrawal.Withdrawal{}, err
	}
	if w.WalletID == "" {
		return withdrawal.Withdrawal{}, apperr.Missing("walletId")
	}
	if len(w.WalletID) <= len(w.CompanyID) || w.WalletID[:len(w.CompanyID)] != w.CompanyID || !tradingWalletSuffix.MatchString(w.WalletID[len(w.CompanyID):]) {
		return withdrawal.Withdrawal{}, apperr.Invalid(apperr.CodeFormat, "walletId", "walletId %q is not a trading wallet id of %s (%s-TW-<10>)", w.WalletID, w.CompanyID, w.CompanyID)
	}
	if w.Currency == "" {
		return withdrawal.Withdrawal{}, apperr.Missing("currency")
	}
	curs := currenciesOf(w.Currency)
	if len(curs) == 0 {
		return withdrawal.Withdrawal{}, apperr.Invalid(apperr.CodeCurrency, "currency", "currency %q is not supported", w.Currency)
	}
	places := int32(0)
	for _, c := range curs {
		places = max(places, c.Decimals)
	}
	if _, err := parseAmount("amount", w.Amount, places, false); err != nil {
		return withdrawal.Withdrawal{}, err
	}
	if limit := req.GetNetworkFeeLimit(); limit != "" {
		a, err := amount.ParseAmount(limit, places)
		if err != nil {
			return withdrawal.Withdrawal{}, apperr.Invalid(apperr.CodeFormat, "networkFeeLimit", "networkFeeLimit must be a canonical decimal of 0 or more, at most %d decimals, got %q", places, limit)
		}
		if a.Sign() > 0 { // a limit of 0 holds no fee
			w.NetworkFeeLimit = a.String()
		}
	}
	return w, checkDestination(w.DestinationAddress, curs)
}

func checkDestination(address string, curs []ledger.Currency) error {
	if address == "" {
		return apperr.Missing("destinationAddress")
	}
	if len(address) > settlement.MaxAddressLength {
		return apperr.Invalid(apperr.CodeLength, "destinationAddress", "destinationAddress must be at most %d characters", settlement.MaxAddressLength)
	}
	if slices.ContainsFunc(curs, func(c ledger.Currency) bool { return ledger.Validate(c.Ledger, address) == nil }) {
		return nil
	}
	return apperr.Invalid(apperr.CodeFormat, "destinationAddress", "destinationAddress is not a valid %s address", curs[0].Code)
}

func currenciesOf(code string) []ledger.Currency {
	var out []ledger.Currency
	for _, c := range ledger.Currencies() {
		if c.Code == code {
			out = append(out, c)
		}
	}
	return out
}

// maxNetworkFeeLength bounds endpoint 11's networkFee (its value is checked against the
// withdrawal: withdrawal.NetworkFeeOf).
const maxNetworkFeeLength = 64

// parseDecision validates endpoint 11's body.
func parseDecision(req *interchangev1.ConfirmWithdrawalRequest) (transferID, decision, reason string, err error) {
	transferID, decision, reason = req.GetTransferId(), req.GetWithdrawalConfirmation(), req.GetReason()
	if err := checkLength("transferId", transferID); err != nil {
		return "", "", "", err
	}
	switch {
	case decision == "":
		return "", "", "", apperr.Missing("withdrawalConfirmation")
	case decision != withdrawal.DecisionAccept && decision != withdrawal.DecisionDecline:
		return "", "", "", apperr.Invalid(apperr.CodeFormat, "withdrawalConfirmation",
			"withdrawalConfirmation must be %s or %s, got %q", withdrawal.DecisionAccept, withdrawal.DecisionDecline, decision)
	case decision == withdrawal.DecisionDecline && reason == "":
		return "", "", "", apperr.Missing("reason")
	case len(reason) > withdrawal.MaxReasonLength:
		return "", "", "", apperr.Invalid(apperr.CodeLength, "reason", "reason must be at most %d characters", withdrawal.MaxReasonLength)
	case decision == withdrawal.DecisionDecline && req.GetNetworkFee() != "":
		return "", "", "", apperr.Invalid(apperr.CodeFormat, "networkFee", "networkFee is named on ACCEPT only: a declined withdrawal pays no fee")
	case len(req.GetNetworkFee()) > maxNetworkFeeLength:
		return "", "", "", apperr.Invalid(apperr.CodeLength, "networkFee", "networkFee must be at most %d characters", maxNetworkFeeLength)
	}
	return transferID, decision, reason, nil
}
