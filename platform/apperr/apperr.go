// Package apperr is the suite's error model (DESIGN.md §6): domain sentinels, and gRPC
// statuses that carry the contract's ER code and the offending field in google.rpc.ErrorInfo.
package apperr

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Domain is the ErrorInfo domain of every error the suite emits.
const Domain = "custody-suite"

// ER codes of the contract and the ones the suite adds (docs/errors.md is the table).
const (
	CodeMalformed      = "ER-100" // body is not valid JSON for the endpoint
	CodeMissing        = "ER-101" // missing mandatory field
	CodeNotFound       = "ER-102" // entity does not exist (also for other companies' entities)
	CodeLength         = "ER-103" // length or range out of bounds
	CodeExists         = "ER-104" // entity already exists / idempotency mismatch
	CodeBlank          = "ER-107" // blank field
	CodeFormat         = "ER-108" // does not match the expected format or enum; unknown field
	CodeCurrency       = "ER-111" // unsupported currency
	CodeEmptyList      = "ER-112" // empty list
	CodeDeactivated    = "ER-113" // entity deactivated
	CodeOtherCompany   = "ER-114" // belongs to another company
	CodeMethod         = "ER-204" // method not allowed
	CodeFeeUnavailable = "ER-252" // fee estimate unavailable
	CodeUnauthorized   = "ER-401" // unauthenticated
	CodeClockSkew      = "ER-410" // request-timestamp outside the allowed window
	CodeForbidden      = "ER-403" // forbidden by role or entitlement
	CodePathNotFound   = "ER-404" // no such path
	CodeConflict       = "ER-409" // conflict with the current state
	CodeTooLarge       = "ER-413" // body too large
	CodeMediaType      = "ER-415" // unsupported media type
	CodeRateLimited    = "ER-429" // rate limited
	CodeInternal       = "ER-500" // internal error
	CodeUnimplemented  = "ER-501" // not implemented yet
	CodeUnavailable    = "ER-503" // a dependency is unavailable
	CodeTimeout        = "ER-504" // deadline exceeded
)

// Domain sentinels. Stores and domain logic return these (wrapped); the server edge maps them.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrExists   = errors.New("already exists")
)

// Error is a client-facing error: gRPC code, ER code, field and message.
type Error struct {
	Status  codes.Code
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s %s: %s", e.Code, e.Field, e.Message) }

// GRPCStatus lets status.FromError and grpc-go turn an *Error into a status with details.
func (e *Error) GRPCStatus() *status.Status {
	st := status.New(e.Status, e.Message)
	info := &errdetails.ErrorInfo{Reason: e.Code, Domain: Domain}
	if e.Field != "" {
		info.Metadata = map[string]string{"field": e.Field}
	}
	withDetails, err := st.WithDetails(info)
	if err != nil {
		return st
	}
	return withDetails
}

// Invalid is a 400: the field's value is wrong.
func Invalid(code, field, format string, args ...any) *Error {
	return &Error{Status: codes.InvalidArgument, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Missing is a 400 ER-101 for a mandatory field.
func Missing(field string) *Error {
	return Invalid(CodeMissing, field, "Missing mandatory field: %s", field)
}

// NotFound is a 404 ER-102.
func NotFound(field, id string) *Error {
	return &Error{Status: codes.NotFound, Code: CodeNotFound, Field: field,
		Message: fmt.Sprintf("Entity with id: %s does not exist", id)}
}

// Forbidden is a 403.
func Forbidden(format string, args ...any) *Error {
	return &Error{Status: codes.PermissionDenied, Code: CodeForbidden, Message: fmt.Sprintf(format, args...)}
}

// Conflict is a 409 with the given ER code.
func Conflict(code, format string, args ...any) *Error {
	return &Error{Status: codes.Aborted, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ConflictOn is Conflict naming the field whose entity is contended or already changed.
func ConflictOn(code, field, format string, args ...any) *Error {
	return &Error{Status: codes.Aborted, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Unimplemented is a 501 ER-501: the field names something the suite cannot do yet.
func Unimplemented(field, format string, args ...any) *Error {
	return &Error{Status: codes.Unimplemented, Code: CodeUnimplemented, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ForbiddenField is a 403 ER-403 that names the field whose value the caller may not send.
func ForbiddenField(field, format string, args ...any) *Error {
	return &Error{Status: codes.PermissionDenied, Code: CodeForbidden, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Precondition is a 409 for a request the entity's current state does not allow (an
// illegal transition, a deactivated entity), with the given ER code.
func Precondition(code, field, format string, args ...any) *Error {
	return &Error{Status: codes.FailedPrecondition, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// OutOfRange is a position before what is kept (an events token too old to read on from):
// the client has to start again from a fresh position.
func OutOfRange(code, field, format string, args ...any) *Error {
	return &Error{Status: codes.OutOfRange, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Exists is a 409 ER-104: the field's id is already taken by something else.
func Exists(field, format string, args ...any) *Error {
	return &Error{Status: codes.AlreadyExists, Code: CodeExists, Field: field, Message: fmt.Sprintf(format, args...)}
}

// LostRace reports whether err is a Conflict: another caller changed or holds the entity.
func LostRace(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == codes.Aborted
}

// Unauthenticated is a 401.
func Unauthenticated(format string, args ...any) *Error {
	return &Error{Status: codes.Unauthenticated, Code: CodeUnauthorized, Message: fmt.Sprintf(format, args...)}
}

// ToStatus maps any error to the status a handler returns: *Error as is, context errors to
// their codes, sentinels to their codes, anything else to a generic internal error (the
// cause is logged by the caller, never sent).
func ToStatus(err error) error {
	var appErr *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &appErr):
		return appErr.GRPCStatus().Err()
	case errors.Is(err, context.DeadlineExceeded):
		return (&Error{Status: codes.DeadlineExceeded, Code: CodeTimeout, Message: "deadline exceeded"}).GRPCStatus().Err()
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request canceled")
	case errors.Is(err, ErrNotFound):
		return (&Error{Status: codes.NotFound, Code: CodeNotFound, Message: "entity does not exist"}).GRPCStatus().Err()
	case errors.Is(err, ErrConflict):
		return Conflict(CodeConflict, "the entity was changed concurrently; retry").GRPCStatus().Err()
	case errors.Is(err, ErrExists):
		return Conflict(CodeExists, "entity already exists").GRPCStatus().Err()
	}
	// A status from a downstream call, possibly wrapped with context: send the status itself,
	// never the wrapping text.
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		return gs.GRPCStatus().Err()
	}
	return (&Error{Status: codes.Internal, Code: CodeInternal, Message: "internal error"}).GRPCStatus().Err()
}
