package store

import (
	"time"

	"github.com/zcustody/suite/services/interchange/settlement"
)

// BSON forms of the settlement types. Each nested doc has exactly its domain type's fields
// (Go converts between them), with explicit names; amounts are canonical decimal strings.

type addressDoc struct {
	Address        string `bson:"address"`
	Ledger         string `bson:"ledger"`
	DestinationTag int64  `bson:"destinationTag"`
	Memo           string `bson:"memo"`
}

type legDoc struct {
	WalletID      string `bson:"walletId"`
	Currency      string `bson:"currency"`
	Ledger        string `bson:"ledger"`
	Amount        string `bson:"amount"`
	ExternalID    string `bson:"externalSettlementId"`
	ExecutionDate string `bson:"executionDate"`
	CompanyID     string `bson:"companyId,omitempty"`
}

type netDoc struct {
	Currency string `bson:"currency"`
	Ledger   string `bson:"ledger"`
	Amount   string `bson:"amount"`
}

type shareDoc struct {
	Role      string `bson:"role"`
	CompanyID string `bson:"companyId"`
	WalletID  string `bson:"walletId"`
	Currency  string `bson:"currency"`
	Amount    string `bson:"amount"`
}

type pendingDoc struct {
	From       string    `bson:"from"`
	To         string    `bson:"to"`
	Reason     string    `bson:"reason"`
	LeaseUntil time.Time `bson:"leaseUntil"`
	Token      string    `bson:"token"`
}

type stepDoc struct {
	From   string    `bson:"from"`
	To     string    `bson:"to"`
	Reason string    `bson:"reason"`
	At     time.Time `bson:"at"`
}

type settlementDoc struct {
	ID               string       `bson:"_id"` // <companyId>:<settlementRequestId>
	TrackingID       string       `bson:"trackingId"`
	RequestID        string       `bson:"settlementRequestId"`
	CompanyID        string       `bson:"companyId"`
	VenueID          string       `bson:"venueId"`
	HeaderStatus     string       `bson:"headerStatus"`
	HeaderErrors     string       `bson:"headerErrors"`
	RequestDateTime  string       `bson:"requestDateTime"`
	InstructionCount int32        `bson:"instructionCount"`
	Addresses        []addressDoc `bson:"receivableAddresses"`
	Legs             []legDoc     `bson:"settlements"`
	Nets             []netDoc     `bson:"netSettlements"`
	Shares           []shareDoc   `bson:"shares"`
	// Parties are the companies whose wallets the legs name (derived from the legs, for the
	// clients' search).
	Parties        []string    `bson:"parties"`
	BodyHash       string      `bson:"bodyHash"`
	Status         string      `bson:"status"`
	Version        int64       `bson:"version"`
	Pending        *pendingDoc `bson:"pending"`
	PayInAttempt   int         `bson:"payInAttempt"`
	PayInHold      string      `bson:"payInHold"`
	ReverseAttempt int         `bson:"reverseAttempt"`
	Reason         string      `bson:"reason"`
	History        []stepDoc   `bson:"history"`
	CreatedAt      time.Time   `bson:"createdAt"`
	UpdatedAt      time.Time   `bson:"updatedAt"`
	// EventSeq is the event sequence (outbox.FieldSeq; absent before the first event).
	EventSeq int64 `bson:"eventSeq,omitempty"`
}

// convert maps a slice element by element (never nil, so BSON stores an empty array).
func convert[S, D any](in []S, f func(S) D) []D {
	out := make([]D, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

func toSettlementDoc(s settlement.Settlement) settlementDoc {
	d := settlementDoc{ID: settlementKey(s.CompanyID, s.RequestID), TrackingID: s.TrackingID, RequestID: s.RequestID,
		CompanyID: s.CompanyID, VenueID: s.VenueID, HeaderStatus: s.HeaderStatus, HeaderErrors: s.HeaderErrors,
		RequestDateTime: s.RequestDateTime, InstructionCount: s.InstructionCount,
		Addresses: convert(s.Addresses, func(a settlement.Address) addressDoc { return addressDoc(a) }),
		Legs:      convert(s.Legs, func(l settlement.Leg) legDoc { return legDoc(l) }),
		Nets:      convert(s.Nets, func(n settlement.Net) netDoc { return netDoc(n) }),
		Shares:    convert(s.Shares, func(o settlement.Share) shareDoc { return shareDoc(o) }),
		Parties:   s.Parties(),
		BodyHash:  s.BodyHash, Status: s.Status, Version: s.Version, PayInAttempt: s.PayInAttempt, PayInHold: s.PayInHold, ReverseAttempt: s.ReverseAttempt, Reason: s.Reason,
		History:   convert(s.History, func(h settlement.Step) stepDoc { return stepDoc(h) }),
		CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), EventSeq: s.EventSeq}
	if s.Pending != nil {
		p := pendingDoc(*s.Pending)
		d.Pending = &p
	}
	return d
}

func (d settlementDoc) settlement() settlement.Settlement {
	s := settlement.Settlement{TrackingID: d.TrackingID, RequestID: d.RequestID, CompanyID: d.CompanyID, VenueID: d.VenueID,
		HeaderStatus: d.HeaderStatus, HeaderErrors: d.HeaderErrors, RequestDateTime: d.RequestDateTime,
		InstructionCount: d.InstructionCount,
		Addresses:        convert(d.Addresses, func(a addressDoc) settlement.Address { return settlement.Address(a) }),
		Legs:             convert(d.Legs, func(l legDoc) settlement.Leg { return settlement.Leg(l) }),
		Nets:             convert(d.Nets, func(n netDoc) settlement.Net { return settlement.Net(n) }),
		Shares:           convert(d.Shares, func(o shareDoc) settlement.Share { return settlement.Share(o) }),
		BodyHash:         d.BodyHash, Status: d.Status, Version: d.Version, PayInAttempt: d.PayInAttempt, PayInHold: d.PayInHold, ReverseAttempt: d.ReverseAttempt, Reason: d.Reason,
		History:   convert(d.History, func(h stepDoc) settlement.Step { return settlement.Step(h) }),
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), EventSeq: d.EventSeq}
	if d.Pending != nil {
		p := settlement.Pending(*d.Pending)
		p.LeaseUntil = p.LeaseUntil.UTC()
		s.Pending = &p
	}
	return s
}
