package scenario

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestCallTransport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		giveErr  error
		wantCode int
	}{
		{"ok", nil, http.StatusOK},
		{"shed by the service", status.Error(codes.ResourceExhausted, "slow down"), http.StatusTooManyRequests},
		{"unavailable", status.Error(codes.Unavailable, "down"), http.StatusServiceUnavailable},
		{"deadline", status.Error(codes.DeadlineExceeded, "late"), http.StatusGatewayTimeout},
		{"anything else", errors.New("boom"), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			c := callClient(func(context.Context) error { calls++; return tt.giveErr })
			resp, err := c.Post(inProcessURL+"x", "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode || calls != 1 {
				t.Errorf("status %d after %d calls, want %d after 1", resp.StatusCode, calls, tt.wantCode)
			}
		})
	}
}
