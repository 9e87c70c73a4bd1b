// Package apitime formats the contract's timestamps: ISO 8601 UTC with milliseconds.
package apitime

import "time"

// Layout is the contract's timestamp layout, e.g. 2026-11-21T10:15:30.123Z.
const Layout = "2006-01-02T15:04:05.000Z"

// Format renders t in UTC with Layout; the zero time renders as "".
func Format(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(Layout)
}

// Parse reads a client's timestamp: RFC 3339 (ISO 8601 with a zone, fractions optional),
// returned in UTC.
func Parse(text string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
