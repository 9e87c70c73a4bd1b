package jsonpb_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/gateway/internal/jsonpb"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// Go randomises map order; the output must not follow it.
func TestOutputIsStable(t *testing.T) {
	t.Parallel()
	fields := map[string]any{}
	for _, k := range strings.Fields("q w e r t y u i o p a s d f g h j k l z x c v b n m") {
		fields[k] = map[string]any{"x": k, "y": []any{k, 1.0}, "z": map[string]any{k + "1": true, k + "2": false}}
	}
	s, err := structpb.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	m := newMarshaler()
	first, err := m.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if got, _ := m.Marshal(s); !bytes.Equal(got, first) {
			t.Fatalf("output changed between calls:\n%s\n%s", first, got)
		}
	}
}

// Marshal hands out bytes of its own: a later call must not write into them.
func TestMarshalReturnsOwnedBytes(t *testing.T) {
	t.Parallel()
	m := newMarshaler()
	first, err := m.Marshal(&tradingv1.Wallet{Id: "first"})
	if err != nil {
		t.Fatal(err)
	}
	want := string(first)
	for range 10 {
		if _, err := m.Marshal(&tradingv1.Wallet{Id: "second, longer than the first"}); err != nil {
			t.Fatal(err)
		}
	}
	if string(first) != want {
		t.Errorf("first output changed to %s, was %s", first, want)
	}
}

// Non-message values, which grpc-gateway passes for a response_body field, render as
// runtime.JSONPb renders them.
func TestNonMessagesMatchJSONPb(t *testing.T) {
	t.Parallel()
	trails := []*servicedeskv1.AuditTrail{{Total: 2, Items: []*servicedeskv1.AuditTrailEntry{{}}}, {}}
	tests := []struct {
		name string
		give any
	}{
		{"trails", trails},
		{"empty trails", []*servicedeskv1.AuditTrail{}},
		{"nil trails", []*servicedeskv1.AuditTrail(nil)},
		{"trail with invalid UTF-8", []*servicedeskv1.AuditTrail{{Items: []*servicedeskv1.AuditTrailEntry{{RequestId: "\xff"}}}}},
		{"nil", nil},
		{"string", "a<b"},
		{"number", 12},
		{"map", map[string]int32{"a": 1}},
		{"strings", []string{"a", "b"}},
	}
	m, pb := newMarshaler(), &runtime.JSONPb{MarshalOptions: reference()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, wantErr := pb.Marshal(tt.give)
			got, gotErr := m.Marshal(tt.give)
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("error %v, runtime.JSONPb's %v", gotErr, wantErr)
			}
			if diff := diffJSON(want, got); wantErr == nil && diff != "" {
				t.Errorf("output differs from runtime.JSONPb's (-JSONPb +jsonpb):\n%s", diff)
			}
		})
	}
}

func TestNewEncoderWritesDelimitedValues(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	enc := newMarshaler().NewEncoder(&buf)
	for _, v := range []any{&tradingv1.Wallet{Id: "a"}, []*servicedeskv1.AuditTrail{{Total: 1}}, "text"} {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{string(mustMarshal(t, &tradingv1.Wallet{Id: "a"})), `[{"total":1,"items":[]}]`, `"text"`}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d: %q", len(lines), len(want), buf.String())
	}
	for i := range want {
		if diff := diffJSON([]byte(want[i]), []byte(lines[i])); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i, diff)
		}
	}
}

func mustMarshal(tb testing.TB, msg proto.Message) []byte {
	tb.Helper()
	b, err := reference().Marshal(msg)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Request decoding is runtime.JSONPb's: unknown fields are refused.
func TestDecodingRefusesUnknownFields(t *testing.T) {
	t.Parallel()
	m := newMarshaler()
	body := `{"venueIds":["BENCH"],"unknownField":1}`
	if err := m.Unmarshal([]byte(body), &tradingv1.SearchWalletsRequest{}); err == nil {
		t.Error("Unmarshal accepted an unknown field")
	}
	if err := m.NewDecoder(strings.NewReader(body)).Decode(&tradingv1.SearchWalletsRequest{}); err == nil {
		t.Error("NewDecoder accepted an unknown field")
	}
	var req tradingv1.SearchWalletsRequest
	if err := m.Unmarshal([]byte(`{"venueIds":["BENCH"],"paginationLimit":10}`), &req); err != nil || req.GetPaginationLimit() != 10 {
		t.Errorf("Unmarshal: %v, %v", err, &req)
	}
	if got := m.ContentType(&req); got != "application/json" {
		t.Errorf("content type %q", got)
	}
}

// Options the fast path does not render are runtime.JSONPb's.
func TestOtherOptionsUseJSONPb(t *testing.T) {
	t.Parallel()
	opts := protojson.MarshalOptions{UseProtoNames: true}
	m := jsonpb.New(runtime.JSONPb{MarshalOptions: opts})
	w := &tradingv1.Wallet{VenueId: "BENCH"}
	got, err := m.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := opts.Marshal(w)
	if diff := diffJSON(want, got); diff != "" {
		t.Errorf("(-protojson +jsonpb):\n%s", diff)
	}
}

// A message type built again from the same file (a dynamicpb message of another descriptor with
// the same name) must not be walked with the plan of the generated one.
func TestSameNameOtherDescriptor(t *testing.T) {
	t.Parallel()
	file := tradingv1.File_trading_v1_trading_proto
	again, err := protodesc.NewFile(protodesc.ToFileDescriptorProto(file), protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	m := newMarshaler()
	assertSame(t, m, walletPage(t)) // plans the generated types first
	wallet := dynamicpb.NewMessage(again.Messages().ByName("Wallet"))
	newFiller(3).message(wallet, 0)
	assertSame(t, m, wallet)
}
