// Package httperr renders every failure the gateway answers in the contract's error body:
// {timestamp, title, status, details:[{message, code}]}, status equal to the HTTP status and
// title its reason phrase (DESIGN.md §6).
package httperr

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/zcustody/suite/platform/apitime"
)

// Detail is one {message, code} entry of the error body.
type Detail struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

// Body is the contract's error body.
type Body struct {
	Timestamp string   `json:"timestamp"`
	Title     string   `json:"title"`
	Status    int      `json:"status"`
	Details   []Detail `json:"details"`
}

// Write sends status with one detail.
func Write(w http.ResponseWriter, status int, code, message string) {
	WriteBody(w, status, []Detail{{Message: message, Code: code}})
}

// MaxMessageLength bounds a detail's message in bytes: messages may quote what the client
// sent (a field name, a value), and an answer never echoes more than this of it.
const MaxMessageLength = 512

// capMessage cuts a message longer than MaxMessageLength at a rune boundary and says so.
func capMessage(m string) string {
	if len(m) <= MaxMessageLength {
		return m
	}
	cut := MaxMessageLength
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + "… (truncated)"
}

// WriteBody sends status with the given details.
func WriteBody(w http.ResponseWriter, status int, details []Detail) {
	for i := range details {
		details[i].Message = capMessage(details[i].Message)
	}
	body := Body{
		Timestamp: apitime.Format(time.Now()),
		Title:     http.StatusText(status),
		Status:    status,
		Details:   details,
	}
	data, err := json.Marshal(body)
	if err != nil {
		data = []byte(`{"title":"Internal Server Error","status":500,"details":[]}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Del("Grpc-Metadata-Content-Type")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
