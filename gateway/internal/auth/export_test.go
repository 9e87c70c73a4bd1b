package auth

import "time"

// SetClock makes c read the time from now (tests move it instead of sleeping).
func SetClock(c *IdentityCache, now func() time.Time) { c.now = now }
