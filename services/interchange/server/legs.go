package server

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/ledger"
)

func parseLegs(in []*interchangev1.Settlement, maxLegs int) ([]settlement.Leg, error) {
	if len(in) == 0 {
		return nil, apperr.Invalid(apperr.CodeEmptyList, "settlements", "settlements must hold at least one settlement")
	}
	if len(in) > maxLegs {
		return nil, apperr.Invalid(apperr.CodeLength, "settlements", "settlements holds more than %d settlements", maxLegs)
	}
	out := make([]settlement.Leg, 0, len(in))
	external := map[string]int{}
	for i, l := range in {
		field := func(name string) string { return fmt.Sprintf("settlements[%d].%s", i, name) }
		if err := checkCounterparty(field("counterparty"), l.GetCounterparty()); err != nil {
			return nil, err
		}
		cur, err := currencyOn(field, l.GetCurrency(), l.GetLedger())
		if err != nil {
			return nil, err
		}
		a, err := parseAmount(field("amount"), l.GetAmount(), cur.Decimals, true)
		if err != nil {
			return nil, err
		}
		if a.IsZero() {
			return nil, apperr.Invalid(apperr.CodeFormat, field("amount"), "%s must not be zero (positive: the wallet pays the venue; negative: the venue pays the wallet)", field("amount"))
		}
		if err := checkExternalID(field("externalSettlementId"), l.GetExternalSettlementId(), i, external); err != nil {
			return nil, err
		}
		if err := checkDate(field("executionDate"), l.GetExecutionDate()); err != nil {
			return nil, err
		}
		out = append(out, settlement.Leg{WalletID: l.GetCounterparty().GetValue(), Currency: cur.Code, Ledger: cur.Ledger, Amount: l.GetAmount(),
			ExternalID: l.GetExternalSettlementId(), ExecutionDate: l.GetExecutionDate()})
	}
	return out, nil
}

func checkCounterparty(field string, c *interchangev1.Counterparty) error {
	switch {
	case c == nil:
		return apperr.Missing(field)
	case c.GetType() == "":
		return apperr.Missing(field + ".type")
	case c.GetType() != settlement.CounterpartyWallet:
		return apperr.Invalid(apperr.CodeFormat, field+".type", "%s.type must be %s, got %q", field, settlement.CounterpartyWallet, c.GetType())
	case c.GetValue() == "":
		return apperr.Missing(field + ".value")
	case len(c.GetValue()) > settlement.MaxIDLength:
		return apperr.Invalid(apperr.CodeLength, field+".value", "%s.value must be at most %d characters", field, settlement.MaxIDLength)
	}
	return nil
}

func checkExternalID(field, id string, i int, seen map[string]int) error {
	if id == "" {
		return nil
	}
	if len(id) > settlement.MaxIDLength {
		return apperr.Invalid(apperr.CodeLength, field, "%s must be at most %d characters", field, settlement.MaxIDLength)
	}
	if j, dup := seen[id]; dup {
		return apperr.Invalid(apperr.CodeFormat, field, "%s %q repeats settlements[%d]", field, id, j)
	}
	seen[id] = i
	return nil
}

// checkDate accepts a day (2026-11-21) or an ISO 8601 timestamp.
func checkDate(field, v string) error {
	if v == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, v); err == nil {
		return nil
	}
	if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return nil
	}
	return apperr.Invalid(apperr.CodeFormat, field, "%s must be a date (2026-11-21) or an ISO 8601 timestamp, got %q", field, v)
}

// currencyOn returns the supported currency code on ledgerCode; field names the entry's
// fields (currency, ledger).
func currencyOn(field func(string) string, code, ledgerCode string) (ledger.Currency, error) {
	if code == "" {
		return ledger.Currency{}, apperr.Missing(field("currency"))
	}
	if !isCurrency(code) {
		return ledger.Currency{}, apperr.Invalid(apperr.CodeCurrency, field("currency"), "%s %q is not a supported currency", field("currency"), code)
	}
	if ledgerCode == "" {
		return ledger.Currency{}, apperr.Missing(field("ledger"))
	}
	for _, c := range ledger.Currencies() {
		if c.Code == code && c.Ledger == ledgerCode {
			return c, nil
		}
	}
	return ledger.Currency{}, apperr.Invalid(apperr.CodeFormat, field("ledger"), "%s %q does not carry %s", field("ledger"), ledgerCode, code)
}

func isCurrency(code string) bool {
	return slices.ContainsFunc(ledger.Currencies(), func(c ledger.Currency) bool { return c.Code == code })
}

func isLedger(code string) bool { return slices.Contains(ledger.Ledgers(), code) }

// parseAmount reads a canonical decimal no finer than the currency's base unit: positive,
// or (signed) of any sign, zero included.
func parseAmount(field, s string, places int32, signed bool) (amount.Amount, error) {
	if s == "" {
		return amount.Zero, apperr.Missing(field)
	}
	read, kind := amount.ParsePositiveAmount, "a positive"
	if signed {
		read, kind = amount.ParseSigned, "a signed"
	}
	a, err := read(s, places)
	switch {
	case errors.Is(err, amount.ErrTooFine):
		return amount.Zero, apperr.Invalid(apperr.CodeFormat, field, "%s has more than %d decimals", field, places)
	case err != nil:
		return amount.Zero, apperr.Invalid(apperr.CodeFormat, field, "%s must be %s canonical decimal such as \"1.5\", got %q", field, kind, s)
	}
	return a, nil
}
