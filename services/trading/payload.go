package trading

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/ledger"
	reqpayload "github.com/zcustody/suite/services/internal/payload"
)

// Catalog services trading owns.
const (
	ServiceCreateWallet     = catalog.TradingWalletCreate
	ServiceDeactivateWallet = catalog.TradingWalletDeactivate
)

// Limits of the creation payload.
const (
	MaxNameLength  = 128
	MaxVenueLength = 64
)

var (
	namePattern  = regexp.MustCompile(`^[a-zA-Z0-9 -]+$`)
	venuePattern = regexp.MustCompile(`^[A-Z0-9_-]+$`)
	uuidPattern  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// CreateWallet is a validated 0x0003-001 payload. Every field is mandatory.
type CreateWallet struct {
	Name        string
	Currency    string // a supported currency code (BTC, ETH, XLM, XRP, USDC, EURC)
	VenueID     string
	AccountUUID string
	UserUUID    string
}

// ParseCreate validates a 0x0003-001 payload. Each field is a string or a one-element array
// of strings (the catalog template's form).
func ParseCreate(payload map[string]any) (CreateWallet, error) {
	if err := reqpayload.CheckKeys("", payload, "name", "currency", "tradingVenueId", "accountUuid", "userUuid"); err != nil {
		return CreateWallet{}, err
	}
	var c CreateWallet
	var err error
	for _, f := range []struct {
		key   string
		dst   *string
		check func(key, v string) error
	}{
		{"name", &c.Name, checkName},
		{"currency", &c.Currency, checkCurrency},
		{"tradingVenueId", &c.VenueID, checkVenue},
		{"accountUuid", &c.AccountUUID, checkUUID},
		{"userUuid", &c.UserUUID, checkUUID},
	} {
		if *f.dst, err = text(payload, f.key); err != nil {
			return CreateWallet{}, err
		}
		if err := f.check(f.key, *f.dst); err != nil {
			return CreateWallet{}, err
		}
	}
	return c, nil
}

// ParseDeactivate validates a 0x0003-002 payload and returns its walletId.
func ParseDeactivate(payload map[string]any) (string, error) {
	if err := reqpayload.CheckKeys("", payload, "walletId"); err != nil {
		return "", err
	}
	return text(payload, "walletId")
}

// Details are the payload's fields as pluginDetail.details echoes them.
func (c CreateWallet) Details(walletID string) map[string]any {
	return map[string]any{"walletId": walletID, "name": c.Name, "currency": c.Currency, "tradingVenueId": c.VenueID,
		"accountUuid": c.AccountUUID, "userUuid": c.UserUUID}
}

// NewWallet is the wallet the request creates: active, zero balances in its currency, and
// the account and user UUIDs as custom properties.
func (c CreateWallet) NewWallet(id, companyID, createdBy, requestID string, now time.Time) Wallet {
	props, _ := json.Marshal(map[string]string{"accountUuid": c.AccountUUID, "userUuid": c.UserUUID}) // strings cannot fail
	now = now.UTC().Truncate(time.Millisecond)
	return Wallet{ID: id, VenueID: c.VenueID, Name: c.Name, Status: StatusActive, CompanyID: companyID, Currency: c.Currency,
		Balances: []Balance{ZeroBalance(c.Currency)}, CustomProperties: string(props), CreatedBy: createdBy,
		CreatedAt: now, UpdatedAt: now, Version: 1, RequestID: requestID}
}

// text reads a string field given as "x" or ["x"]. Unlike payload.Text, an array of several
// values answers ER-108 (not ER-103), [null] ER-101, and a blank value ER-107.
func text(payload map[string]any, key string) (string, error) {
	v, ok := payload[key]
	if list, isList := v.([]any); isList {
		if len(list) == 0 {
			return "", apperr.Invalid(apperr.CodeEmptyList, key, "%s must hold one value", key)
		}
		if len(list) == 1 {
			v = list[0]
		}
	}
	if !ok || v == nil {
		return "", apperr.Missing(key)
	}
	s, isString := v.(string)
	if !isString {
		return "", apperr.Invalid(apperr.CodeFormat, key, "%s must be a string or a one-element array of strings", key)
	}
	if strings.TrimSpace(s) == "" {
		return "", apperr.Invalid(apperr.CodeBlank, key, "%s must not be blank", key)
	}
	return s, nil
}

func checkName(key, v string) error {
	if len(v) > MaxNameLength {
		return apperr.Invalid(apperr.CodeLength, key, "%s must be 1 to %d characters", key, MaxNameLength)
	}
	if !namePattern.MatchString(v) {
		return apperr.Invalid(apperr.CodeFormat, key, "%s may hold letters, digits, spaces and hyphens only", key)
	}
	return nil
}

func checkCurrency(key, v string) error {
	if !slices.ContainsFunc(ledger.Currencies(), func(c ledger.Currency) bool { return c.Code == v }) {
		return apperr.Invalid(apperr.CodeCurrency, key, "unsupported currency %q", v)
	}
	return nil
}

func checkVenue(key, v string) error {
	if len(v) > MaxVenueLength {
		return apperr.Invalid(apperr.CodeLength, key, "%s must be 1 to %d characters", key, MaxVenueLength)
	}
	if !venuePattern.MatchString(v) {
		return apperr.Invalid(apperr.CodeFormat, key, "%s may hold A-Z, 0-9, '_' and '-' only", key)
	}
	return nil
}

func checkUUID(key, v string) error {
	if !uuidPattern.MatchString(v) {
		return apperr.Invalid(apperr.CodeFormat, key, "%s must be a UUID", key)
	}
	return nil
}
