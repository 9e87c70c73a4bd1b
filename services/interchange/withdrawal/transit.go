package withdrawal

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/zcustody/suite/services/internal/amount"
)

// MaxTransitInFlight bounds the withdrawals in flight one transit reconciliation reads.
const MaxTransitInFlight = 1000

// Transit reads the two in-transit accounts a withdrawal to custody passes through, per
// currency code: trading's, which receives what leaves the trading wallets, and custody's,
// which pays it into the custody wallets.
type Transit interface {
	// Sent is what trading's in-transit account has received (posted).
	Sent(ctx context.Context) (map[string]amount.Amount, error)
	// Received is what custody's in-transit account has paid out (posted).
	Received(ctx context.Context) (map[string]amount.Amount, error)
}

// TransitLine is one currency of a transit reconciliation.
type TransitLine struct {
	Currency                 string
	Sent, Received, InFlight amount.Amount
}

// TransitReport is a transit reconciliation: the lines, the withdrawals in flight, and every
// difference they do not explain.
type TransitReport struct {
	Lines      []TransitLine
	InFlight   int
	Violations []string
}

// ReconcileTransit checks, per currency, that what left trading wallets for custody equals
// what custody wallets received, but for the withdrawals accepted whose money step is not
// done yet: for each currency 0 ≤ sent − received ≤ in flight. Custody's account is read
// first: a credit always follows its post, so what it shows never exceeds what trading shows
// after it, and a negative gap is a real fault. The withdrawals in flight are read last:
// every one posted but not credited when custody was read is then either not completed or
// completed since the reconciliation began, and both count.
func (s *Service) ReconcileTransit(ctx context.Context, t Transit) (TransitReport, error) {
	began := s.now()
	received, err := t.Received(ctx)
	if err != nil {
		return TransitReport{}, err
	}
	sent, err := t.Sent(ctx)
	if err != nil {
		return TransitReport{}, err
	}
	moving, err := s.store.TransitWithdrawals(ctx, began, MaxTransitInFlight)
	if err != nil {
		return TransitReport{}, err
	}
	var r TransitReport
	inFlight := map[string]amount.Amount{}
	for _, w := range moving {
		inFlight[w.Currency] = inFlight[w.Currency].Add(amount.MustStored(w.Amount))
		if w.CompletedAt.IsZero() {
			r.InFlight++
		}
	}
	if len(moving) == MaxTransitInFlight {
		r.Violations = append(r.Violations, fmt.Sprintf("at least %d withdrawals to custody are in flight: too many to reconcile", MaxTransitInFlight))
	}
	currencies := slices.Collect(maps.Keys(sent))
	currencies = append(currencies, slices.Collect(maps.Keys(received))...)
	currencies = append(currencies, slices.Collect(maps.Keys(inFlight))...)
	slices.Sort(currencies)
	for _, cur := range slices.Compact(currencies) {
		line := TransitLine{Currency: cur, Sent: sent[cur], Received: received[cur], InFlight: inFlight[cur]}
		r.Lines = append(r.Lines, line)
		gap := line.Sent.Sub(line.Received)
		switch {
		case gap.Sign() < 0:
			r.Violations = append(r.Violations, fmt.Sprintf("%s: custody wallets received %s from trading, more than the %s that left trading wallets", cur, line.Received, line.Sent))
		case gap.Sub(line.InFlight).Sign() > 0:
			r.Violations = append(r.Violations, fmt.Sprintf("%s: %s left trading wallets for custody and %s arrived; the withdrawals in flight explain only %s", cur, line.Sent, line.Received, line.InFlight))
		}
	}
	return r, nil
}
