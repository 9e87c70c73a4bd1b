// Package logging builds the suite's slog JSON logger.
package logging

import (
	"io"
	"log/slog"
)

// New returns a JSON logger at level ("debug", "info", "warn", "error") tagged with service.
// A line logged with a context that carries a Request (NewContext) names it: request_id,
// trace_id and span_id.
func New(w io.Writer, level, service string) *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		lvl = slog.LevelInfo
	}
	return slog.New(contextHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})}).With("service", service)
}
