package jsonpb_test

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

func TestMatchesProtojsonOnEdgeValues(t *testing.T) {
	t.Parallel()
	nested := everyKind(t)
	ts := func(secs int64, nanos int32) *timestamppb.Timestamp {
		return &timestamppb.Timestamp{Seconds: secs, Nanos: nanos}
	}
	tests := []struct {
		name string
		give proto.Message
	}{
		{"empty response", &tradingv1.SearchWalletsResponse{}},
		{"wallet with every struct kind", &tradingv1.SearchWalletsResponse{Items: []*tradingv1.Wallet{{CustomProperties: nested}}}},
		{"struct holding an empty struct", &tradingv1.Wallet{CustomProperties: &structpb.Struct{}}},
		{"struct with a nil value", &tradingv1.Wallet{CustomProperties: &structpb.Struct{Fields: map[string]*structpb.Value{"a": nil}}}},
		{"value with no kind", &tradingv1.Wallet{CustomProperties: &structpb.Struct{Fields: map[string]*structpb.Value{"a": {}}}}},
		{"value holding a nil struct", structpb.NewStructValue(nil)},
		{"value holding a nil list", structpb.NewListValue(nil)},
		{"value with a typed nil kind", &structpb.Value{Kind: (*structpb.Value_StringValue)(nil)}},
		{"list with a nil value", &structpb.ListValue{Values: []*structpb.Value{nil}}},
		{"NaN in a value", structpb.NewNumberValue(math.NaN())},
		{"infinity in a value", structpb.NewNumberValue(math.Inf(-1))},
		{"largest double in a value", structpb.NewNumberValue(math.MaxFloat64)},
		{"negative zero in a value", structpb.NewNumberValue(math.Copysign(0, -1))},
		{"invalid UTF-8 in a key", &structpb.Struct{Fields: map[string]*structpb.Value{"\xff": structpb.NewNullValue()}}},
		{"invalid UTF-8 in a string", &tradingv1.Wallet{Name: "a\xc3"}},
		{"U+FFFD written out", &tradingv1.Wallet{Name: "\ufffd\uFFFE"}},
		{"timestamp epoch", ts(0, 0)},
		{"timestamp millis", ts(1767225600, 120_000_000)},
		{"timestamp micros", ts(1767225600, 120_500_000+1000)},
		{"timestamp nanos", ts(-1, 1)},
		{"timestamp first", ts(-62135596800, 0)},
		{"timestamp last", ts(253402300799, 999_999_999)},
		{"timestamp too early", ts(-62135596801, 0)},
		{"timestamp too late", ts(253402300800, 0)},
		{"timestamp negative nanos", ts(0, -1)},
		{"timestamp whole second of nanos", ts(0, 1_000_000_000)},
		{"nil timestamp", (*timestamppb.Timestamp)(nil)},
		{"double NaN wrapper", wrapperspb.Double(math.NaN())},
		{"float wrapper", wrapperspb.Float(0.1)},
		{"float wrapper large", wrapperspb.Float(math.MaxFloat32)},
		{"float wrapper tiny", wrapperspb.Float(math.SmallestNonzeroFloat32)},
		{"int64 wrapper", wrapperspb.Int64(math.MinInt64)},
		{"uint64 wrapper", wrapperspb.UInt64(math.MaxUint64)},
		{"bytes wrapper", wrapperspb.Bytes([]byte{0, 0xff, 0xfe, 'a'})},
		{"string wrapper", wrapperspb.String("\u007f\u0080")},
		{"empty", &emptypb.Empty{}},
		{"duration", durationpb.New(-1500 * 1e6)},
		{"field mask", &fieldmaskpb.FieldMask{Paths: []string{"venue_id", "items.name"}}},
		{"any", mustAny(t, nested)},
		{"any unresolvable", &anypb.Any{TypeUrl: "type.googleapis.com/no.such.Type"}},
		{"audit trail", &servicedeskv1.GetAuditTrailResponse{Trails: []*servicedeskv1.AuditTrail{{Total: 1}, {}}}},
	}
	m := newMarshaler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assertSame(t, m, tt.give)
		})
	}
}

// everyKind is a Struct with a value of every kind, edge numbers and keys needing escapes.
func everyKind(tb testing.TB) *structpb.Struct {
	tb.Helper()
	s, err := structpb.NewStruct(map[string]any{
		"null": nil, "true": true, "false": false, "zero": 0.0, "tenth": 0.1, "big": 1e21, "small": 1e-7,
		"negative": -12.5, "text": "<a href=\"x\">&</a>\u2028", "": "empty key", "ключ": "значение",
		"list": []any{nil, 1.0, "two", []any{}, map[string]any{}}, "object": map[string]any{"a": map[string]any{"b": nil}},
		"control\x01\x1f": "\x00\t\n\\/",
	})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func mustAny(tb testing.TB, msg proto.Message) *anypb.Any {
	tb.Helper()
	a, err := anypb.New(msg)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// The fast path is meant to serve the gateway's responses, not to pass the tests by leaving
// everything to protojson.
func TestFastPathServesResponses(t *testing.T) {
	t.Parallel()
	m := newMarshaler()
	tests := []struct {
		name string
		give proto.Message
		want bool
	}{
		{"wallet page", walletPage(t), true},
		{"struct of every kind", everyKind(t), true},
		{"empty response", &servicedeskv1.GetAuditTrailResponse{}, true},
		{"typed nil", (*tradingv1.SearchWalletsResponse)(nil), false},
		{"NaN in a struct", &tradingv1.Wallet{CustomProperties: &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewNumberValue(math.NaN())}}}, false},
		{"duration", durationpb.New(0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := m.Fast(tt.give); got != tt.want {
				t.Errorf("fast path taken: %v, want %v", got, tt.want)
			}
		})
	}
}
