package eventsv1

// Written by hand, beside the generated code: the event types data.proto declares, and the
// one way an event's data becomes JSON.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// dataTypes maps every event type to the message of its data (option event_types).
var dataTypes = sync.OnceValue(func() map[string]protoreflect.MessageDescriptor {
	out := map[string]protoreflect.MessageDescriptor{}
	msgs := File_events_v1_data_proto.Messages()
	for i := range msgs.Len() {
		md := msgs.Get(i)
		for _, t := range proto.GetExtension(md.Options(), E_EventTypes).([]string) {
			if prev, ok := out[t]; ok {
				panic(fmt.Sprintf("events.v1: event type %s is declared by both %s and %s", t, prev.FullName(), md.FullName()))
			}
			out[t] = md
		}
	}
	return out
})

// EventTypes are the event types data.proto declares, sorted.
func EventTypes() []string { return slices.Sorted(maps.Keys(dataTypes())) }

// DataMessage is the message of event type t's data.
func DataMessage(t string) (protoreflect.MessageDescriptor, bool) {
	md, ok := dataTypes()[t]
	return md, ok
}

// dataJSON writes data as the REST API writes its answers: fields with default values
// written, unset optional and message fields left out.
var dataJSON = protojson.MarshalOptions{EmitDefaultValues: true}

// MarshalData is the JSON of the data of an event of type t. It refuses a type data.proto
// does not declare and data of another message than the type's.
func MarshalData(t string, data proto.Message) ([]byte, error) {
	md, ok := DataMessage(t)
	if !ok {
		return nil, fmt.Errorf("event type %s is not declared in events/v1/data.proto", t)
	}
	if data == nil {
		return nil, fmt.Errorf("event %s has no data", t)
	}
	if got := data.ProtoReflect().Descriptor().FullName(); got != md.FullName() {
		return nil, fmt.Errorf("event %s carries %s data, want %s", t, got, md.FullName())
	}
	raw, err := dataJSON.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("event %s data: %w", t, err)
	}
	// protojson varies its spacing from build to build; the staged bytes should not.
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, fmt.Errorf("event %s data: %w", t, err)
	}
	return out.Bytes(), nil
}
