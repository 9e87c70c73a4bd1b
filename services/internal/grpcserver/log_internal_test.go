package grpcserver

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
)

func TestDatabaseDownIsUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give error
		want codes.Code
	}{
		{"no server selected", fmt.Errorf("find wallet: %w", topology.ServerSelectionError{Wrapped: errors.New("connection refused")}), codes.Unavailable},
		{"domain error untouched", apperr.NotFound("walletId", "W1"), codes.NotFound},
		{"caller's deadline untouched", fmt.Errorf("find: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{"other errors stay internal", errors.New("boom"), codes.Internal},
	}
	for _, tt := range tests {
		got := apperr.ToStatus(databaseDown(tt.give))
		if status.Code(got) != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, status.Code(got), tt.want)
		}
		if tt.want == codes.Unavailable && status.Convert(got).Message() != "the database is unavailable, retry later" {
			t.Errorf("%s: message %q leaks the cause", tt.name, status.Convert(got).Message())
		}
	}
}
