package httperr_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/platform/apitime"
)

// decode reads an error body and checks the fields every error body shares.
func decode(t *testing.T, rec *httptest.ResponseRecorder) httperr.Body {
	t.Helper()
	if got := rec.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	if got, want := rec.Header().Get("Content-Length"), strconv.Itoa(rec.Body.Len()); got != want {
		t.Errorf("Content-Length = %q, want %q", got, want)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", rec.Body.String(), err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"details", "status", "timestamp", "title"}, keys); diff != "" {
		t.Errorf("body keys mismatch (-want +got):\n%s", diff)
	}
	var b httperr.Body
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	ts, err := time.Parse(apitime.Layout, b.Timestamp)
	if err != nil {
		t.Errorf("timestamp %q is not %s: %v", b.Timestamp, apitime.Layout, err)
	}
	if d := time.Since(ts); d < -time.Second || d > time.Minute {
		t.Errorf("timestamp %s is not now", b.Timestamp)
	}
	if b.Status != rec.Code {
		t.Errorf("body status %d, HTTP status %d: want equal", b.Status, rec.Code)
	}
	if want := http.StatusText(rec.Code); b.Title != want {
		t.Errorf("title = %q, want %q", b.Title, want)
	}
	return b
}

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		giveStatus  int
		giveCode    string
		giveMessage string
	}{
		{giveStatus: http.StatusBadRequest, giveCode: "ER-101", giveMessage: "Missing mandatory field: name"},
		{giveStatus: http.StatusUnauthorized, giveCode: "ER-401", giveMessage: "missing header: signature"},
		{giveStatus: http.StatusNotFound, giveCode: "ER-102", giveMessage: `Entity with id: "<x>" & co does not exist`},
		{giveStatus: http.StatusRequestEntityTooLarge, giveCode: "ER-413", giveMessage: "request body exceeds the limit"},
		{giveStatus: http.StatusInternalServerError, giveCode: "ER-500", giveMessage: "internal error"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.giveStatus), func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			httperr.Write(rec, tt.giveStatus, tt.giveCode, tt.giveMessage)
			if rec.Code != tt.giveStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.giveStatus)
			}
			b := decode(t, rec)
			want := []httperr.Detail{{Message: tt.giveMessage, Code: tt.giveCode}}
			if diff := cmp.Diff(want, b.Details); diff != "" {
				t.Errorf("details mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give []httperr.Detail
		want string // the details member as sent
	}{
		{name: "two details", give: []httperr.Detail{{Message: "a", Code: "ER-101"}, {Message: "b", Code: "ER-108"}},
			want: `[{"message":"a","code":"ER-101"},{"message":"b","code":"ER-108"}]`},
		{name: "empty details are an array", give: []httperr.Detail{}, want: `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			httperr.WriteBody(rec, http.StatusBadRequest, tt.give)
			decode(t, rec)
			var raw struct {
				Details json.RawMessage `json:"details"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(raw.Details)); diff != "" {
				t.Errorf("details mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteDropsGatewayContentTypeHeader(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	rec.Header().Set("Grpc-Metadata-Content-Type", "application/grpc")
	rec.Header().Set("Content-Type", "text/plain")
	httperr.Write(rec, http.StatusConflict, "ER-409", "conflict")
	decode(t, rec)
	if got := rec.Header().Get("Grpc-Metadata-Content-Type"); got != "" {
		t.Errorf("Grpc-Metadata-Content-Type = %q, want it removed", got)
	}
}

// TestMessagesAreCapped: an error answer never echoes more than MaxMessageLength bytes of
// its message (which may quote the client's input), cut on a rune boundary, and says so.
func TestMessagesAreCapped(t *testing.T) {
	t.Parallel()
	long := "Unknown field: " + strings.Repeat("é", 4000)
	rec := httptest.NewRecorder()
	httperr.Write(rec, http.StatusBadRequest, "ER-108", long)
	var b httperr.Body
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || len(b.Details) != 1 {
		t.Fatalf("body %s: %v", rec.Body, err)
	}
	m := b.Details[0].Message
	if len(m) > httperr.MaxMessageLength+len("… (truncated)") || !strings.HasSuffix(m, "… (truncated)") || !utf8.ValidString(m) {
		t.Errorf("message of %d bytes (%q…), want at most %d and marked truncated", len(m), m[:40], httperr.MaxMessageLength)
	}
	short := httptest.NewRecorder()
	httperr.Write(short, http.StatusBadRequest, "ER-108", "Unknown field: x")
	if !strings.Contains(short.Body.String(), `"Unknown field: x"`) {
		t.Errorf("a short message was changed: %s", short.Body)
	}
}
