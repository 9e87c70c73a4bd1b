package servicedesk

import (
	"context"
	"errors"

	"github.com/zcustody/suite/platform/apperr"
)

// Bounds of one sweep.
const (
	sweepExpireLimit = 100
	sweepResumeLimit = 20
)

// Sweep runs one pass of the background loop: it expires the pending requests past their
// expiresAt, and resumes the authorised requests whose execution did not finish within the
// grace (a crash, an owner that was down). Time is the desk's clock (Config.Now).
func (d *Desk) Sweep(ctx context.Context) {
	now := d.now()
	expired, err := d.store.Due(ctx, []string{StatusPendingConfirmation, StatusPendingAuthorisation}, "expiresAt", now, sweepExpireLimit)
	if err != nil {
		d.logger.Warn("sweep expired requests", "error", err.Error())
	}
	for _, r := range expired {
		t := move(r, StatusExpired, ActionExpired, RoleSystem, "system")
		if _, err := d.store.Apply(ctx, r, t, now); err != nil && !errors.Is(err, apperr.ErrConflict) {
			d.logger.Warn("expire request", "request_id", r.ID, "error", err.Error())
		}
	}
	stalled, err := d.store.Due(ctx, []string{StatusAuthorised}, "authorisedAt", now.Add(-d.grace), sweepResumeLimit)
	if err != nil {
		d.logger.Warn("sweep authorised requests", "error", err.Error())
	}
	for _, r := range stalled {
		d.Execute(ctx, r)
	}
}
