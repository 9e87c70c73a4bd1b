package store

import (
	"regexp"
	"testing"

	"github.com/zcustody/suite/services/servicedesk"
)

// TestEveryStatusHasItsEvent: each status a request can enter names one event type of its
// own, lower case and dotted.
func TestEveryStatusHasItsEvent(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(`^service_request\.[a-z]+$`)
	seen := map[string]string{}
	for _, s := range servicedesk.Statuses {
		typ, ok := requestEventTypes[s]
		if !ok || !pattern.MatchString(typ) {
			t.Errorf("status %s: event type %q", s, typ)
		}
		if other, dup := seen[typ]; dup {
			t.Errorf("statuses %s and %s share event type %s", other, s, typ)
		}
		seen[typ] = s
	}
	if len(requestEventTypes) != len(servicedesk.Statuses) {
		t.Errorf("%d event types for %d statuses", len(requestEventTypes), len(servicedesk.Statuses))
	}
}
