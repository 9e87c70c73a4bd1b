// Package jsonpb renders gRPC responses as JSON faster than protojson, with the same output.
//
// Marshaler is grpc-gateway's runtime.JSONPb with a faster Marshal for proto messages: a plan
// per message type, built once, drives a protoreflect walk that appends to a pooled buffer.
// Request decoding, content type and everything else stay runtime.JSONPb's. Whatever the walk
// does not render exactly as protojson does (Any, Duration, FieldMask, proto2 and editions
// messages, NaN and infinite floats, invalid UTF-8, out-of-range timestamps, a Value with no
// kind…) sends the whole message to protojson, so the output never depends on the fast path.
package jsonpb

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"sync"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// maxPooledBuffer bounds the buffers kept for reuse, so one huge response does not stay in memory.
const maxPooledBuffer = 1 << 20

var _ runtime.Marshaler = (*Marshaler)(nil)

// Marshaler is runtime.JSONPb with a faster Marshal and NewEncoder for proto messages.
type Marshaler struct {
	runtime.JSONPb
	fast     bool     // the options are ones the fast path renders exactly
	plans    sync.Map // protoreflect.FullName → *plan
	encoders sync.Pool
}

// New wraps pb. The fast path serves pb.MarshalOptions of {EmitDefaultValues: true} (AllowPartial
// and Resolver aside, which only matter for types that fall back); other options use pb as is.
func New(pb runtime.JSONPb) *Marshaler {
	return &Marshaler{JSONPb: pb, fast: supported(pb.MarshalOptions)}
}

func supported(o protojson.MarshalOptions) bool {
	return o.EmitDefaultValues && !o.EmitUnpopulated && !o.UseProtoNames && !o.UseEnumNumbers &&
		!o.Multiline && o.Indent == ""
}

// Marshal renders v as JSON; values the fast path does not take go to runtime.JSONPb.
func (m *Marshaler) Marshal(v any) ([]byte, error) {
	e := m.encoder()
	defer m.release(e)
	if !m.append(e, v) {
		return m.JSONPb.Marshal(v)
	}
	return bytes.Clone(e.out), nil
}

// ErrTrailingData refuses a body that holds more than one JSON value: the signature covers
// every byte of the body, so the gateway reads all of it or refuses it.
var ErrTrailingData = errors.New("trailing data after the JSON body: the body must hold exactly one JSON value")

// NewDecoder decodes the body's one JSON value as runtime.JSONPb's decoder does, then
// refuses anything after it but white space (ErrTrailingData).
func (m *Marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	d := json.NewDecoder(r)
	wrapped := runtime.DecoderWrapper{Decoder: d, UnmarshalOptions: m.UnmarshalOptions}
	return runtime.DecoderFunc(func(v any) error {
		if err := wrapped.Decode(v); err != nil {
			return err
		}
		if _, err := d.Token(); !errors.Is(err, io.EOF) {
			return ErrTrailingData
		}
		return nil
	})
}

// NewEncoder returns an encoder writing each value to w followed by the delimiter, as
// runtime.JSONPb's does.
func (m *Marshaler) NewEncoder(w io.Writer) runtime.Encoder {
	fallback := m.JSONPb.NewEncoder(w)
	return runtime.EncoderFunc(func(v any) error {
		e := m.encoder()
		defer m.release(e)
		if !m.append(e, v) {
			return fallback.Encode(v)
		}
		e.out = append(e.out, m.Delimiter()...)
		_, err := w.Write(e.out)
		return err
	})
}

// append renders v into e.out, reporting false when runtime.JSONPb has to render it instead.
func (m *Marshaler) append(e *encoder, v any) bool {
	if !m.fast {
		return false
	}
	if msg, ok := v.(proto.Message); ok {
		return e.top(m, msg)
	}
	return m.appendList(e, v)
}

// appendList renders a non-nil slice of messages, what grpc-gateway passes for a response_body
// naming a repeated field. runtime.JSONPb renders each element with protojson and a nil slice
// as null; nil slices and anything else are left to it.
func (m *Marshaler) appendList(e *encoder, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.IsNil() || !rv.Type().Elem().Implements(messageType) {
		return false
	}
	e.out = append(e.out, '[')
	for i := range rv.Len() {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		msg, _ := rv.Index(i).Interface().(proto.Message)
		if msg == nil || !e.top(m, msg) {
			return false
		}
	}
	e.out = append(e.out, ']')
	return true
}

var messageType = reflect.TypeFor[proto.Message]()

func (m *Marshaler) encoder() *encoder {
	if e, ok := m.encoders.Get().(*encoder); ok {
		return e
	}
	return &encoder{out: make([]byte, 0, 4096)}
}

func (m *Marshaler) release(e *encoder) {
	if cap(e.out) > maxPooledBuffer {
		return
	}
	e.out = e.out[:0]
	m.encoders.Put(e)
}
