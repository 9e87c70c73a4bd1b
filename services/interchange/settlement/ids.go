package settlement

import "fmt"

// Journal entry ids of a settlement in trading's journal: deterministic, so a step retried,
// resumed or raced is the same entry and moves nothing twice.

// PayInID is the hold PAY_IN places at the settlement's current attempt.
func PayInID(s Settlement) string {
	return fmt.Sprintf("stl:%s:payin:%d", s.TrackingID, max(s.PayInAttempt, 1))
}

// PayOutID is the entry that pays the payees out of the clearing account.
func PayOutID(s Settlement) string { return "stl:" + s.TrackingID + ":payout" }

// ReverseID is the entry that undoes a paid-out settlement at its current attempt.
func ReverseID(s Settlement) string {
	return fmt.Sprintf("stl:%s:reverse:%d", s.TrackingID, max(s.ReverseAttempt, 1))
}

// ClearingAccount is the settlement's clearing account in trading's journal: what PAY_IN
// holds goes into it, what PAY_OUT pays comes out of it, and it ends at zero.
func ClearingAccount(s Settlement) string { return "clearing:" + s.TrackingID }
