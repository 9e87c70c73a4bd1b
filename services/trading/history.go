package trading

import (
	"regexp"
	"strconv"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/page"
)

// HistoryFilter is a validated wallet history request: the company's wallet, optional
// currency, time range and business reference, a cursor (the last sequence seen) and a
// page size.
type HistoryFilter struct {
	CompanyID, WalletID string
	Currency            string
	From, To            time.Time
	Reference           string
	AfterSeq            int64
	Limit               int
}

// HistoryInput is the request as sent.
type HistoryInput struct {
	WalletID, Currency, From, To, Reference, Cursor string
	Limit                                           *int32
}

// MaxReferenceLength bounds the reference filter.
const MaxReferenceLength = 200

var referencePattern = regexp.MustCompile(`^[A-Za-z0-9._:~-]+$`)

// ParseHistory validates a wallet history request of companyID.
func ParseHistory(companyID string, in HistoryInput) (HistoryFilter, error) {
	f := HistoryFilter{CompanyID: companyID, WalletID: in.WalletID, Currency: in.Currency, Reference: in.Reference}
	if in.WalletID == "" {
		return f, apperr.Missing("walletId")
	}
	if len(in.WalletID) > MaxEntryIDLength {
		return f, apperr.Invalid(apperr.CodeLength, "walletId", "walletId must be at most %d characters", MaxEntryIDLength)
	}
	if _, ok := CurrencyDecimals(in.Currency); in.Currency != "" && !ok {
		return f, apperr.Invalid(apperr.CodeCurrency, "currency", "currency %q is not supported", in.Currency)
	}
	if in.Reference != "" && (len(in.Reference) > MaxReferenceLength || !referencePattern.MatchString(in.Reference)) {
		return f, apperr.Invalid(apperr.CodeFormat, "reference", "reference must be a settlement tracking id, transfer id or deposit id")
	}
	var err error
	if f.From, err = parseTime("from", in.From); err != nil {
		return f, err
	}
	if f.To, err = parseTime("to", in.To); err != nil {
		return f, err
	}
	if in.Cursor != "" {
		if f.AfterSeq, err = strconv.ParseInt(in.Cursor, 10, 64); err != nil || f.AfterSeq < 0 {
			return f, apperr.Invalid(apperr.CodeFormat, "cursor", "cursor must be the nextCursor of an earlier page")
		}
	}
	p, err := page.Parse(in.Limit, nil, nil, "sequence")
	f.Limit = int(p.Limit)
	return f, err
}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, apperr.Invalid(apperr.CodeFormat, field, "%s must be an ISO 8601 time such as 2026-11-21T10:15:30Z, got %q", field, s)
	}
	return t, nil
}
