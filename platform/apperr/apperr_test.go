package apperr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/apperr"
)

func info(code, field string) *errdetails.ErrorInfo {
	i := &errdetails.ErrorInfo{Reason: code, Domain: apperr.Domain}
	if field != "" {
		i.Metadata = map[string]string{"field": field}
	}
	return i
}

func TestToStatus(t *testing.T) {
	t.Parallel()
	leak := errors.New("mongo: dial tcp 10.0.0.1:27017: connection refused")
	tests := []struct {
		name        string
		give        error
		wantCode    codes.Code
		wantMessage string
		wantDetails []proto.Message
	}{
		{name: "missing", give: apperr.Missing("name"),
			wantCode: codes.InvalidArgument, wantMessage: "Missing mandatory field: name", wantDetails: []proto.Message{info("ER-101", "name")}},
		{name: "invalid", give: apperr.Invalid(apperr.CodeLength, "paginationLimit", "paginationLimit must be between 1 and %d", 1024),
			wantCode: codes.InvalidArgument, wantMessage: "paginationLimit must be between 1 and 1024", wantDetails: []proto.Message{info("ER-103", "paginationLimit")}},
		{name: "wrapped app error", give: fmt.Errorf("validate: %w", apperr.NotFound("walletId", "W1")),
			wantCode: codes.NotFound, wantMessage: "Entity with id: W1 does not exist", wantDetails: []proto.Message{info("ER-102", "walletId")}},
		{name: "forbidden has no field", give: apperr.Forbidden("role %s required", "CHECKER"),
			wantCode: codes.PermissionDenied, wantMessage: "role CHECKER required", wantDetails: []proto.Message{info("ER-403", "")}},
		{name: "conflict", give: apperr.Conflict(apperr.CodeExists, "trustline exists"),
			wantCode: codes.Aborted, wantMessage: "trustline exists", wantDetails: []proto.Message{info("ER-104", "")}},
		{name: "unauthenticated", give: apperr.Unauthenticated("no principal"),
			wantCode: codes.Unauthenticated, wantMessage: "no principal", wantDetails: []proto.Message{info("ER-401", "")}},
		{name: "wrapped ErrNotFound", give: fmt.Errorf("find wallet W1: %w", apperr.ErrNotFound),
			wantCode: codes.NotFound, wantMessage: "entity does not exist", wantDetails: []proto.Message{info("ER-102", "")}},
		{name: "wrapped ErrConflict", give: fmt.Errorf("update wallet W1: %w", apperr.ErrConflict),
			wantCode: codes.Aborted, wantMessage: "the entity was changed concurrently; retry", wantDetails: []proto.Message{info("ER-409", "")}},
		{name: "wrapped ErrExists", give: fmt.Errorf("insert vasp V1: %w", apperr.ErrExists),
			wantCode: codes.Aborted, wantMessage: "entity already exists", wantDetails: []proto.Message{info("ER-104", "")}},
		{name: "deadline", give: fmt.Errorf("find wallet: %w", context.DeadlineExceeded),
			wantCode: codes.DeadlineExceeded, wantMessage: "deadline exceeded", wantDetails: []proto.Message{info("ER-504", "")}},
		{name: "canceled", give: fmt.Errorf("find wallet: %w", context.Canceled),
			wantCode: codes.Canceled, wantMessage: "request canceled"},
		{name: "status passes through", give: status.Error(codes.FailedPrecondition, "wallet is deactivated"),
			wantCode: codes.FailedPrecondition, wantMessage: "wallet is deactivated"},
		{name: "wrapped downstream status", give: fmt.Errorf("call trading: %w", overTheWire(apperr.NotFound("walletId", "W1"))),
			wantCode: codes.NotFound, wantMessage: "Entity with id: W1 does not exist", wantDetails: []proto.Message{info("ER-102", "walletId")}},
		{name: "arbitrary error", give: leak,
			wantCode: codes.Internal, wantMessage: "internal error", wantDetails: []proto.Message{info("ER-500", "")}},
		{name: "wrapped arbitrary error", give: fmt.Errorf("find wallet W1: %w", leak),
			wantCode: codes.Internal, wantMessage: "internal error", wantDetails: []proto.Message{info("ER-500", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Read the status as the client does: from its wire form.
			st := status.FromProto(status.Convert(apperr.ToStatus(tt.give)).Proto())
			if st.Code() != tt.wantCode || st.Message() != tt.wantMessage {
				t.Errorf("ToStatus = %s %q, want %s %q", st.Code(), st.Message(), tt.wantCode, tt.wantMessage)
			}
			var got []proto.Message
			for _, d := range st.Details() {
				m, ok := d.(proto.Message)
				if !ok {
					t.Fatalf("undecodable detail: %v", d)
				}
				got = append(got, m)
			}
			if diff := cmp.Diff(tt.wantDetails, got, protocmp.Transform()); diff != "" {
				t.Errorf("details mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// overTheWire returns err as a gRPC client receives it.
func overTheWire(err error) error {
	return status.FromProto(status.Convert(err).Proto()).Err()
}

func TestToStatusNil(t *testing.T) {
	t.Parallel()
	if err := apperr.ToStatus(nil); err != nil {
		t.Errorf("ToStatus(nil) = %v, want nil", err)
	}
}

func TestErrorIsAStatus(t *testing.T) {
	t.Parallel()
	// grpc-go turns a returned *Error into its status without ToStatus.
	err := fmt.Errorf("validate: %w", apperr.Missing("currency"))
	if got := status.Code(err); got != codes.InvalidArgument {
		t.Errorf("status.Code(wrapped *Error) = %s, want InvalidArgument", got)
	}
}
