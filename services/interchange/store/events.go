package store

import (
	"context"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Events (docs/decisions.md, "Events: the outbox"). Every status change of a settlement or a
// withdrawal stages its events in the same conditional update as the change (outbox.Stage),
// numbered after the eventSeq read with the document: the update's guard (the version, or
// the settlement runner's token) is what makes that read still true when it lands. An insert
// stores its events in the inserted document. The app relays each collection of Outboxes.
const (
	EntitySettlement = catalog.EntitySettlement
	EntityWithdrawal = catalog.EntityWithdrawal
)

// Outboxes are the collections whose documents carry an outbox, for the app's relays.
func (st *Store) Outboxes() []*mongo.Collection {
	return []*mongo.Collection{st.db.Collection(colSettlements), st.db.Collection(colWithdrawals)}
}

// withoutOutbox leaves the outbox out of what a find returns: only the relay reads it (a
// settlement's may hold an event per company its legs name). FerretDB does not take a
// projection on findAndModify, so the conditional updates return the whole document.
var withoutOutbox = bson.D{{Key: outbox.FieldOutbox, Value: 0}}

// settlementEventType is the event of a settlement entering status: settlement.received,
// settlement.initiated, settlement.awaiting_funds, settlement.pay_in, settlement.pay_out,
// settlement.complete, settlement.rejected, settlement.failed (the status without its
// SETTLEMENT_ prefix, in lower case).
func settlementEventType(status string) string {
	return EntitySettlement + "." + strings.ToLower(strings.TrimPrefix(status, "SETTLEMENT_"))
}

// SettlementEntityID is the entity id of the events of s that company receives: s's tracking
// id for the company that owns s, <trackingId>@<company> for a client whose wallets its legs
// name (see settlementDrafts).
func SettlementEntityID(s settlement.Settlement, company string) string {
	if company == s.CompanyID {
		return s.TrackingID
	}
	return s.TrackingID + "@" + company
}

// settlementDrafts are the events of s entering its status (from previous; none for a new
// settlement).
//
// A settlement is seen by several companies: the company that owns it (that instructed it:
// the venue's operator, through endpoint 3 or 0x0003-003) sees it whole; each client whose
// wallets its legs name sees it with its own legs only and no nets (settlement.SeenBy, as
// the settlement search shows it). An event names one company and must carry only what that
// company may see, so each change stages one event per audience, its data that audience's
// view: the owner's under entity id <trackingId>, each client's under
// <trackingId>@<clientCompanyId>, so (entity type, entity id, version) stays unique in the log.
// One sequence, the document's eventSeq, numbers them all: the audiences are fixed when the
// instruction is stored (its legs never change) and every change stages one event for each
// of them, so the n-th change is version n of every audience's entity and each company sees
// its own versions without a gap. (A change staged for some audiences only would need a
// sequence per audience.) A settlement of many clients thus stages many events per change
// (at most one per leg, each with a summary of the legs, not the legs).
//
// Left out: the operator of the venue when another company owns the settlement (the
// settlement engine's InstructSettlement): interchange does not know which company operates
// a venue (only a caller's principal names the venues it operates).
func settlementDrafts(ctx context.Context, s settlement.Settlement, previous string) []outbox.Draft {
	request := outbox.RequestID(ctx)
	audiences := append([]string{s.CompanyID}, slices.DeleteFunc(s.Parties(), func(c string) bool { return c == s.CompanyID })...)
	drafts := make([]outbox.Draft, 0, len(audiences))
	for _, company := range audiences {
		d := outbox.Draft{Type: settlementEventType(s.Status), CompanyID: company, EntityType: EntitySettlement,
			EntityID: SettlementEntityID(s, company), Data: settlementView(s.SeenBy(settlement.Viewer{CompanyID: company}), previous)}
		// The causing request is another company's call (the venue operator's, or the
		// engine's on its behalf): only the settlement's owner sees its id.
		if company == s.CompanyID {
			d.RequestID = request
		}
		drafts = append(drafts, d)
	}
	return drafts
}

// settlementView is the data of s as seen (already narrowed by SeenBy): the fields of its
// record in the settlement search, as that company sees it, with the legs summarised (a
// settlement may have a thousand): how many, and their sum per currency and ledger.
func settlementView(s settlement.Settlement, previous string) *eventsv1.SettlementEventData {
	d := &eventsv1.SettlementEventData{SettlementRequestId: s.RequestID, SettlementTrackingId: s.TrackingID, Status: s.Status,
		PreviousStatus: outbox.IfSet(previous), VenueId: s.VenueID, CompanyId: s.CompanyID, CreatedAt: apitime.Format(s.CreatedAt),
		UpdatedAt: apitime.Format(s.UpdatedAt), SettlementCount: int32(len(s.Legs)), SettlementTotals: legTotals(s.Legs)}
	// As the record's errors: the reason of a rejected or failed settlement.
	if s.Status == settlement.StatusRejected || s.Status == settlement.StatusFailed {
		d.Errors = &commonv1.ErrorObject{Message: s.Reason, Code: apperr.CodeConflict}
	}
	// The nets as submitted (one per currency at most); only the owner sees them.
	for _, n := range s.Nets {
		d.NetSettlements = append(d.NetSettlements, &eventsv1.EventAmountSum{Currency: n.Currency, Ledger: n.Ledger, Amount: n.Amount})
	}
	return d
}

// legTotals sums the legs' signed amounts per currency and ledger, in that order.
func legTotals(legs []settlement.Leg) []*eventsv1.EventAmountSum {
	type key struct{ currency, ledger string }
	sums := map[key]amount.Amount{}
	for _, l := range legs {
		k := key{l.Currency, l.Ledger}
		sums[k] = sums[k].Add(amount.MustStored(l.Amount))
	}
	out := make([]*eventsv1.EventAmountSum, 0, len(sums))
	for k, a := range sums {
		out = append(out, &eventsv1.EventAmountSum{Currency: k.currency, Ledger: k.ledger, Amount: a.String()})
	}
	slices.SortFunc(out, func(a, b *eventsv1.EventAmountSum) int {
		return strings.Compare(a.Currency+"\x00"+a.Ledger, b.Currency+"\x00"+b.Ledger)
	})
	return out
}

// withdrawalEventType is the event of a withdrawal entering status: withdrawal.pending_confirmation,
// withdrawal.accepted, withdrawal.declined.
func withdrawalEventType(status string) string {
	return EntityWithdrawal + "." + strings.ToLower(status)
}

// withdrawalDrafts are the events of w entering its status (from previous; none for a new
// withdrawal): one, to the client whose wallet it leaves, under entity id <transferId>,
// with the client's view of it. The operator of the wallet's venue sees the withdrawal too
// (without the client's service request and custody wallet), but interchange does not know
// which company operates a venue (only the deciding caller's principal names its venues), so
// no event goes to it.
//
// A withdrawal declined at its creation because it did not fit under a limit of its
// company's approval policy is also a withdrawal.limit_refused event (the reason names the
// limit and what is left of it), after its withdrawal.declined.
func withdrawalDrafts(ctx context.Context, w withdrawal.Withdrawal, previous string) []outbox.Draft {
	drafts := []outbox.Draft{{Type: withdrawalEventType(w.Status), CompanyID: w.CompanyID, EntityType: EntityWithdrawal,
		EntityID: w.TransferID, Data: withdrawalView(w, previous), RequestID: outbox.RequestID(ctx)}}
	if w.Status == withdrawal.StatusDeclined && previous == withdrawal.StatusPending && strings.HasPrefix(w.Reason, withdrawal.ReasonLimitPrefix) {
		refused := drafts[0]
		refused.Type = EntityWithdrawal + ".limit_refused"
		drafts = append(drafts, refused)
	}
	return drafts
}

// withdrawalView is w as its client's record in the withdrawal search shows it.
func withdrawalView(w withdrawal.Withdrawal, previous string) *eventsv1.WithdrawalEventData {
	return &eventsv1.WithdrawalEventData{TransferId: w.TransferID, CompanyId: w.CompanyID, WalletId: w.WalletID, VenueId: w.VenueID,
		Currency: w.Currency, Amount: w.Amount, DestinationAddress: outbox.IfSet(w.DestinationAddress),
		DestinationWalletId: outbox.IfSet(w.DestinationWalletID), RequestId: outbox.IfSet(w.RequestID), Status: w.Status,
		PreviousStatus: outbox.IfSet(previous), Reason: outbox.IfSet(w.Reason), CreatedAt: apitime.Format(w.CreatedAt),
		UpdatedAt: apitime.Format(w.UpdatedAt), DecidedAt: outbox.IfSet(apitime.Format(w.DecidedAt)), Completed: !w.CompletedAt.IsZero(),
		NetworkFeeLimit: outbox.IfSet(w.NetworkFeeLimit), NetworkFee: outbox.IfSet(w.NetworkFee)}
}
