// Package validation enforces the bounds the protos declare (buf.validate field rules), the one
// place every bound of the API is written: the OpenAPI document publishes the same rules. Each
// violation becomes the contract's error: a missing value ER-101, a length, item count or range
// ER-103, anything else (pattern, format, enum) ER-108, naming the field as a JSON client
// spells it (`requestIds[3]`, `header.venueId`).
package validation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/apperr"
)

// Check returns nil when msg keeps every rule its proto declares, else the first violation as
// an apperr.Error.
func Check(msg proto.Message) error {
	err := protovalidate.Validate(msg)
	if err == nil {
		return nil
	}
	var verr *protovalidate.ValidationError
	if !errors.As(err, &verr) || len(verr.Violations) == 0 {
		// A rule that cannot be evaluated is a defect of the protos, not of the request.
		return fmt.Errorf("validation: %w", err)
	}
	viol := verr.Violations[0].Proto
	field := Path(viol)
	if code := Code(viol.GetRuleId()); code != apperr.CodeMissing {
		return apperr.Invalid(code, field, "%s %s", field, viol.GetMessage())
	}
	return apperr.Missing(field)
}

// UnaryServerInterceptor checks every request before its handler runs.
func UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if msg, ok := req.(proto.Message); ok {
			if err := Check(msg); err != nil {
				return nil, apperr.ToStatus(err)
			}
		}
		return handler(ctx, req)
	}
}

// lengthRules are the rule names (after the type prefix) that bound a length, a count or a range.
var lengthRules = map[string]bool{
	"min_len": true, "max_len": true, "len": true, "min_bytes": true, "max_bytes": true, "len_bytes": true,
	"min_items": true, "max_items": true, "min_pairs": true, "max_pairs": true,
	"gt": true, "gte": true, "lt": true, "lte": true,
	"gt_lt": true, "gt_lte": true, "gte_lt": true, "gte_lte": true,
	"gt_lt_exclusive": true, "gt_lte_exclusive": true, "gte_lt_exclusive": true, "gte_lte_exclusive": true,
}

// Code maps a protovalidate rule id (`string.max_len`, `int32.gte_lte`, `required`) to the
// contract's error code.
func Code(ruleID string) string {
	if ruleID == "required" {
		return apperr.CodeMissing
	}
	if _, rule, ok := strings.Cut(ruleID, "."); ok && lengthRules[rule] {
		return apperr.CodeLength
	}
	return apperr.CodeFormat
}

// Path names the violated field as JSON spells it: lowerCamel names joined by dots, with the
// index of a repeated field or the key of a map.
func Path(viol *validate.Violation) string {
	var b strings.Builder
	for i, e := range viol.GetField().GetElements() {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(jsonName(e.GetFieldName()))
		switch k := e.GetSubscript().(type) {
		case *validate.FieldPathElement_Index:
			fmt.Fprintf(&b, "[%d]", k.Index)
		case *validate.FieldPathElement_StringKey:
			fmt.Fprintf(&b, "[%q]", k.StringKey)
		case *validate.FieldPathElement_IntKey:
			fmt.Fprintf(&b, "[%d]", k.IntKey)
		case *validate.FieldPathElement_UintKey:
			fmt.Fprintf(&b, "[%d]", k.UintKey)
		case *validate.FieldPathElement_BoolKey:
			fmt.Fprintf(&b, "[%t]", k.BoolKey)
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// jsonName is protoc's JSON name of a field: underscores dropped, the letter after each upper.
func jsonName(name string) string {
	var b strings.Builder
	upper := false
	for _, r := range name {
		switch {
		case r == '_':
			upper = true
		case upper:
			b.WriteString(strings.ToUpper(string(r)))
			upper = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
