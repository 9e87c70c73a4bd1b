// Package edge guards the gateway's HTTP entry before anything else reads a request: body
// size (413), content type (415), and buffering the exact body bytes the signature covers.
package edge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/platform/apperr"
)

type bodyKey struct{}

// Body returns the raw request body buffered by Guard.
func Body(ctx context.Context) []byte {
	b, _ := ctx.Value(bodyKey{}).([]byte)
	return b
}

// Guard refuses bodies over maxBody bytes and bodies that are not JSON, then buffers the body.
func Guard(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBody {
			httperr.Write(w, http.StatusRequestEntityTooLarge, apperr.CodeTooLarge, "request body exceeds the limit")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			httperr.Write(w, http.StatusRequestEntityTooLarge, apperr.CodeTooLarge, "request body exceeds the limit")
			return
		case err != nil:
			httperr.Write(w, http.StatusBadRequest, apperr.CodeMalformed, "could not read the request body")
			return
		}
		if len(body) > 0 && !isJSON(r.Header.Get("Content-Type")) {
			httperr.Write(w, http.StatusUnsupportedMediaType, apperr.CodeMediaType, "Content-Type must be application/json")
			return
		}
		var shape shapeError
		if errors.As(checkShape(body), &shape) {
			httperr.Write(w, http.StatusBadRequest, shape.code, shape.msg)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, body)))
	})
}

func isJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}
