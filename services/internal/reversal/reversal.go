// Package reversal carries out the service desk's ledger reversal (catalog 0x0009-001, the
// custodian's operators only, maker then checker) for the service that keeps the journal the
// request names: trading's plugin for "trading", custody's for "custody". The request names
// an applied entry and, optionally, the amounts given back per account; once a checker
// approved it, its owner records the reversal (journal.Reverse) under an id derived from the
// request id, so a retried execution is the same reversal.
package reversal

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
	reqpayload "github.com/zcustody/suite/services/internal/payload"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Code is the code of a reversal entry (its statement rows' type).
const Code = "correction.reversal"

// Bounds of the payload.
const (
	MaxAmounts      = 64
	MaxReasonLength = 256
)

// EntryID is the id of the reversal entry service request requestID records.
func EntryID(requestID string) string { return requestID + ":reversal" }

// Request is a validated reversal payload.
type Request struct {
	Journal string
	// EntryID is the entry to reverse.
	EntryID string
	// Amounts given back per account of the entry (holder, currency, and the entry's side
	// when named); nil reverses the entry in full.
	Amounts []journal.Leg
	Reason  string
}

// Places tells the decimals of a currency of the journal's accounts (false: not one of its
// currencies).
type Places func(currency string) (int32, bool)

// Parse validates a reversal payload: journal (trading or custody), entryId, optional
// amounts (objects of account, currency, amount and optional side DEBIT or CREDIT, the
// entry's side on that account) and an optional reason. Field errors name the payload field.
func Parse(raw map[string]any, places Places) (Request, error) {
	if err := reqpayload.CheckKeys("", raw, "journal", "entryId", "amounts", "reason"); err != nil {
		return Request{}, err
	}
	var r Request
	var err error
	if r.Journal, err = reqpayload.Text(raw, "journal"); err != nil {
		return r, err
	}
	if r.EntryID, err = reqpayload.Text(raw, "entryId"); err != nil {
		return r, err
	}
	switch {
	case r.EntryID == "":
		return r, apperr.Invalid(apperr.CodeBlank, "entryId", "entryId must not be blank")
	case len(r.EntryID) > journal.MaxIDLength:
		return r, apperr.Invalid(apperr.CodeLength, "entryId", "entryId must be at most %d characters", journal.MaxIDLength)
	}
	if raw["reason"] != nil {
		if r.Reason, err = reqpayload.Text(raw, "reason"); err != nil {
			return r, err
		}
		if len(r.Reason) > MaxReasonLength {
			return r, apperr.Invalid(apperr.CodeLength, "reason", "reason must be at most %d characters", MaxReasonLength)
		}
	}
	r.Amounts, err = parseAmounts(raw["amounts"], places)
	return r, err
}

func parseAmounts(v any, places Places) ([]journal.Leg, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	switch {
	case !ok:
		return nil, apperr.Invalid(apperr.CodeFormat, "amounts", "amounts must be an array of {account, currency, amount}")
	case len(list) == 0:
		return nil, apperr.Invalid(apperr.CodeEmptyList, "amounts", "amounts must name one account or more; leave it out to reverse in full")
	case len(list) > MaxAmounts:
		return nil, apperr.Invalid(apperr.CodeLength, "amounts", "amounts names at most %d accounts", MaxAmounts)
	}
	out := make([]journal.Leg, 0, len(list))
	for i, e := range list {
		field := fmt.Sprintf("amounts[%d]", i)
		prefix := field + "."
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, apperr.Invalid(apperr.CodeFormat, field, "%s must be an object of account, currency and amount", field)
		}
		if err := reqpayload.CheckKeys(prefix, obj, "account", "currency", "amount", "side"); err != nil {
			return nil, err
		}
		var l journal.Leg
		var text string
		var err error
		for _, f := range []struct {
			key string
			dst *string
		}{{"account", &l.Holder}, {"currency", &l.Currency}, {"amount", &text}} {
			s, err := reqpayload.Text(obj, f.key)
			if err != nil {
				return nil, qualify(err, prefix)
			}
			if s == "" {
				return nil, apperr.Invalid(apperr.CodeBlank, prefix+f.key, "%s%s must not be blank", prefix, f.key)
			}
			*f.dst = s
		}
		if len(l.Holder) > journal.MaxIDLength {
			return nil, apperr.Invalid(apperr.CodeLength, prefix+"account", "%saccount must be at most %d characters", prefix, journal.MaxIDLength)
		}
		p, ok := places(l.Currency)
		if !ok {
			return nil, apperr.Invalid(apperr.CodeCurrency, prefix+"currency", "currency %q is not supported", l.Currency)
		}
		if l.Amount, err = amount.ParsePositiveAmount(text, p); err != nil {
			return nil, apperr.Invalid(apperr.CodeFormat, prefix+"amount", "%samount: %s (got %q)", prefix, err.Error(), text)
		}
		if obj["side"] != nil {
			side, err := reqpayload.Text(obj, "side")
			if err != nil {
				return nil, qualify(err, prefix)
			}
			sides := map[string]journal.Side{"DEBIT": journal.Debit, "CREDIT": journal.Credit}
			if l.Side, ok = sides[side]; !ok {
				return nil, apperr.Invalid(apperr.CodeFormat, prefix+"side", "%sside must be DEBIT or CREDIT (the entry's side on the account)", prefix)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// qualify names a nested field in a payload error.
func qualify(err error, prefix string) error {
	var e *apperr.Error
	if errors.As(err, &e) {
		q := *e
		q.Field = prefix + e.Field
		return &q
	}
	return err
}

// Handler returns the plugin handler of the ledger reversal on j, the journal called name
// ("trading" or "custody"): Validate plans the reversal (the entry exists, is reversible, and
// the amounts fit what is left of it) and reserves the reversal's entry id; Execute records
// it.
func Handler(name string, j *journal.Journal, places Places) plugin.Handler {
	h := handler{name: name, j: j, places: places}
	return plugin.Handler{Validate: h.validate, Execute: h.execute}
}

type handler struct {
	name   string
	j      *journal.Journal
	places Places
}

func (h handler) parse(sr *pluginv1.ServiceRequest) (Request, error) {
	r, err := Parse(plugin.Payload(sr), h.places)
	if err != nil {
		return r, err
	}
	if r.Journal != h.name {
		return r, apperr.Invalid(apperr.CodeFormat, "journal", "journal %q is not kept here (%s)", r.Journal, h.name)
	}
	return r, nil
}

func (h handler) validate(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	r, err := h.parse(sr)
	if err != nil {
		return nil, err
	}
	e, err := h.j.PlanReversal(ctx, r.EntryID, r.Amounts, Code)
	if err != nil {
		return nil, Error(err, r.EntryID)
	}
	id := EntryID(sr.GetRequestId())
	d, err := details(h.name, id, r, e)
	if err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{id}, Details: []*structpb.Struct{d}}, nil
}

func (h handler) execute(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	r, err := h.parse(sr)
	if err != nil {
		return nil, err
	}
	id := EntryID(sr.GetRequestId())
	if len(entityIDs) > 0 && (len(entityIDs) != 1 || entityIDs[0] != id) {
		return nil, apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds must hold the reversal entry id %s", id)
	}
	res, err := h.j.Reverse(ctx, id, r.EntryID, r.Amounts, Code)
	if err != nil {
		return nil, Error(err, r.EntryID)
	}
	outcome := "APPLIED"
	if res.Replayed {
		outcome = "REPLAYED"
	}
	d, err := structpb.NewStruct(map[string]any{"journal": h.name, "reversalEntryId": id, "reverses": r.EntryID, "outcome": outcome})
	if err != nil {
		return nil, err
	}
	return &pluginv1.ExecuteResponse{EntityIds: []string{id}, Details: []*structpb.Struct{d}}, nil
}

// details describe a planned reversal for the service desk's request.
func details(name, id string, r Request, e journal.Entry) (*structpb.Struct, error) {
	legs := make([]any, 0, len(e.Legs))
	for _, l := range e.Legs {
		side := "CREDIT"
		if l.Side == journal.Debit {
			side = "DEBIT"
		}
		legs = append(legs, map[string]any{"account": l.Holder, "currency": l.Currency, "side": side, "amount": l.Amount.String()})
	}
	d := map[string]any{"journal": name, "reversalEntryId": id, "reverses": r.EntryID, "reference": e.BusinessKey, "legs": legs}
	if r.Reason != "" {
		d["reason"] = r.Reason
	}
	return structpb.NewStruct(d)
}

// Error is the caller's answer to a journal refusal of a reversal of entryID: an unknown
// entry is 404 ER-102 on entryId; an entry that cannot be reversed, amounts over what is left
// of it, or money the reversal takes back that is spent are 409 ER-409 (on entryId, amounts);
// amounts that do not balance or name no account of the entry are 400 ER-108 on amounts; the
// reversal's id taken by another entry is 409 ER-104. Anything else is returned as it is.
func Error(err error, entryID string) error {
	var exists *journal.ExistsError
	var short *journal.InsufficientError
	switch {
	case errors.Is(err, journal.ErrEntryNotFound):
		return apperr.NotFound("entryId", entryID)
	case errors.Is(err, journal.ErrNotReversible):
		return apperr.Precondition(apperr.CodeConflict, "entryId", "%s", err.Error())
	case errors.Is(err, journal.ErrReversalExceeds):
		return apperr.Precondition(apperr.CodeConflict, "amounts", "%s", err.Error())
	case errors.As(err, &short):
		return apperr.Precondition(apperr.CodeConflict, "amounts", "the reversal of %s takes back %s from %s, which lacks it now", entryID, short.Currency, short.Holder)
	case errors.As(err, &exists):
		return apperr.Exists("entryId", "reversal entry %s exists with a different %s", exists.ID, exists.Field)
	case errors.Is(err, journal.ErrUnbalanced), errors.Is(err, journal.ErrInvalidEntry):
		return apperr.Invalid(apperr.CodeFormat, "amounts", "%s", err.Error())
	}
	return err
}
