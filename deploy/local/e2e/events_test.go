package e2e_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/local/demo"
)

// eventPage is the events search's answer as a client reads it.
type eventPage struct {
	Items []struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		CompanyID string `json:"companyId"`
		Entity    struct{ Type, ID, Version string }
		Data      map[string]any `json:"data"`
		Request   string         `json:"request"`
		Sequence  string         `json:"sequence"`
	} `json:"items"`
	NextToken string `json:"nextToken"`
	HasMore   bool   `json:"hasMore"`
}

// eventsOf pages through companyID's events from the start, as a client catching up does.
func eventsOf(t *testing.T, companyID string) eventPage {
	t.Helper()
	var all eventPage
	after := ""
	for range 100 {
		var page eventPage
		wantOK(t, do(t, newClient(companyID, viewer), http.MethodPost, "/v3/api/events/search", mustJSON(t, map[string]any{"after": after, "limit": 500})), &page)
		all.Items = append(all.Items, page.Items...)
		all.NextToken = page.NextToken
		if !page.HasMore {
			return all
		}
		after = page.NextToken
	}
	t.Fatal("the events search did not end")
	return all
}

// TestAStateChangeBecomesAnEventOfItsCompanyOnly: a trustline activated through the API
// reaches the company's event log (relayed from custody's outbox, sequenced by the events
// service) with the calling request's id, and no other company sees it.
func TestAStateChangeBecomesAnEventOfItsCompanyOnly(t *testing.T) {
	t.Parallel()
	id := stellarWallet(t, "xlm-xlm", "5")
	r := activate(t, demo.CompanyZTEST, maker, id, "usdc-xlm")
	var body map[string]any
	wantOK(t, r, &body)
	entity := id + ":usdc-xlm"
	deadline := time.Now().Add(20 * time.Second)
	for {
		page := eventsOf(t, demo.CompanyZTEST)
		found := false
		for _, e := range page.Items {
			if e.Type != "trustline.activated" || e.Entity.ID != entity {
				continue
			}
			found = true
			if e.CompanyID != demo.CompanyZTEST || e.Entity.Type != "trustline" || e.Entity.Version != "1" || e.Request != r.header.Get("request-identifier") {
				t.Errorf("event = %+v, want ZTEST's trustline version 1 caused by request %s", e, r.header.Get("request-identifier"))
			}
			if e.Data["walletId"] != id || e.Data["status"] != "ACTIVE" {
				t.Errorf("event data = %v, want the trustline's public fields", e.Data)
			}
			checkTimestamp(t, e.Timestamp)
		}
		for i, e := range page.Items {
			if seq, _ := strconv.Atoi(e.Sequence); seq != i+1 {
				t.Fatalf("event %d of the log is at position %s, want %d: positions run 1, 2, 3, … without gaps", i, e.Sequence, i+1)
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no trustline.activated event of %s after 20 s", entity)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, e := range eventsOf(t, demo.CompanyZACME).Items {
		if e.CompanyID != demo.CompanyZACME || e.Entity.ID == entity {
			t.Fatalf("ZACME reads %+v", e)
		}
	}
}
