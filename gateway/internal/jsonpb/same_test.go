package jsonpb_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/gateway/internal/jsonpb"
)

// reference is the gateway's response options, which the fast path must match.
func reference() protojson.MarshalOptions {
	return protojson.MarshalOptions{EmitDefaultValues: true}
}

func newMarshaler() *jsonpb.Marshaler {
	return jsonpb.New(runtime.JSONPb{MarshalOptions: reference()})
}

// assertSame fails when m renders msg differently from protojson: another JSON value (protojson
// randomises its whitespace, so bytes are never compared), or another error.
func assertSame(tb testing.TB, m *jsonpb.Marshaler, msg proto.Message) {
	tb.Helper()
	want, wantErr := reference().Marshal(msg)
	got, gotErr := m.Marshal(msg)
	if wantErr != nil || gotErr != nil {
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			tb.Fatalf("error %v, protojson's %v\nmessage: %v", gotErr, wantErr, msg)
		}
		return
	}
	if diff := diffJSON(want, got); diff != "" {
		tb.Fatalf("output differs from protojson's (-protojson +jsonpb):\n%s\nprotojson: %s\njsonpb:    %s", diff, want, got)
	}
}

// diffJSON compares two JSON texts as values: numbers by their text (json.Number), objects
// without regard to key order. Invalid JSON, trailing data and duplicate keys are differences.
func diffJSON(want, got []byte) string {
	w, err := parseJSON(want)
	if err != nil {
		return "protojson: " + err.Error()
	}
	g, err := parseJSON(got)
	if err != nil {
		return "jsonpb: " + err.Error()
	}
	return cmp.Diff(w, g)
}

func parseJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := parseValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data after the value: %v", err)
	}
	return v, nil
}

func parseValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		return parseObject(d)
	case json.Delim('['):
		list := []any{}
		for d.More() {
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := d.Token()
		return list, err
	}
	return tok, nil
}

func parseObject(d *json.Decoder) (any, error) {
	obj := map[string]any{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if _, dup := obj[key]; dup {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		if obj[key], err = parseValue(d); err != nil {
			return nil, err
		}
	}
	_, err := d.Token()
	return obj, err
}

func TestDiffJSONSeesDifferences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, want, got string
	}{
		{"number as string", `{"a":1}`, `{"a":"1"}`},
		{"number text", `{"a":1e+21}`, `{"a":1000000000000000000000}`},
		{"negative zero", `{"a":-0}`, `{"a":0}`},
		{"missing key", `{"a":1,"b":2}`, `{"a":1}`},
		{"extra key", `{"a":1}`, `{"a":1,"b":null}`},
		{"duplicate key", `{"a":1}`, `{"a":1,"a":1}`},
		{"key name", `{"venueId":""}`, `{"venue_id":""}`},
		{"null and empty", `{"a":{}}`, `{"a":null}`},
		{"list order", `[1,2]`, `[2,1]`},
		{"escaped text", `"a\u0001"`, `"a\u0002"`},
		{"trailing data", `{}`, `{}{}`},
		{"invalid", `{}`, `{`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diffJSON([]byte(tt.want), []byte(tt.got)) == "" {
				t.Errorf("no difference seen between %s and %s", tt.want, tt.got)
			}
		})
	}
	if diff := diffJSON([]byte(`{"a":[1,"x"], "b":{"c":true}}`), []byte(`{"b":{"c":true},"a":[1,"x"]}`)); diff != "" {
		t.Errorf("key order or whitespace seen as a difference:\n%s", diff)
	}
}
