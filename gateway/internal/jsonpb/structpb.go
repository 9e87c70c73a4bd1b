package jsonpb

import (
	"slices"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// The walk of google.protobuf.Struct, Value and ListValue through their Go types, when the
// message is the generated one (not dynamicpb): ranging a map through protoreflect costs an
// allocation per entry, and these carry the free-form parts of responses.

// goStruct writes m as a google.protobuf.Struct, reporting handled false when m is not a
// *structpb.Struct.
func (e *encoder) goStruct(m protoreflect.Message) (ok, handled bool) {
	s, handled := m.Interface().(*structpb.Struct)
	if !handled {
		return false, false
	}
	return e.structFields(s.GetFields()), true
}

func (e *encoder) goValue(m protoreflect.Message) (ok, handled bool) {
	v, handled := m.Interface().(*structpb.Value)
	if !handled {
		return false, false
	}
	return e.structValue(v), true
}

func (e *encoder) goList(m protoreflect.Message) (ok, handled bool) {
	l, handled := m.Interface().(*structpb.ListValue)
	if !handled {
		return false, false
	}
	return e.listValues(l.GetValues()), true
}

// structFields writes the fields with their keys in byte order, as protojson does.
func (e *encoder) structFields(fields map[string]*structpb.Value) bool {
	start := len(e.keys)
	for k := range fields {
		e.keys = append(e.keys, k)
	}
	end := len(e.keys)
	slices.Sort(e.keys[start:end])
	e.out = append(e.out, '{')
	for i := start; i < end; i++ {
		if i > start {
			e.out = append(e.out, ',')
		}
		var ok bool
		if e.out, ok = appendString(e.out, e.keys[i]); !ok {
			return false
		}
		e.out = append(e.out, ':')
		if !e.structValue(fields[e.keys[i]]) {
			return false
		}
	}
	e.out = append(e.out, '}')
	clear(e.keys[start:end])
	e.keys = e.keys[:start]
	return true
}

func (e *encoder) listValues(values []*structpb.Value) bool {
	e.out = append(e.out, '[')
	for i, v := range values {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		if !e.structValue(v) {
			return false
		}
	}
	e.out = append(e.out, ']')
	return true
}

// structValue writes the set kind of v; a nil v or no kind is left to protojson, which refuses it.
func (e *encoder) structValue(v *structpb.Value) bool {
	var ok bool
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		e.out, ok = append(e.out, "null"...), k != nil
	case *structpb.Value_NumberValue:
		ok = k != nil && e.float(k.NumberValue, 64)
	case *structpb.Value_StringValue:
		ok = k != nil
		if ok {
			e.out, ok = appendString(e.out, k.StringValue)
		}
	case *structpb.Value_BoolValue:
		ok = k != nil
		if ok {
			e.out = strconv.AppendBool(e.out, k.BoolValue)
		}
	case *structpb.Value_StructValue:
		ok = k != nil && e.structFields(k.StructValue.GetFields())
	case *structpb.Value_ListValue:
		ok = k != nil && e.listValues(k.ListValue.GetValues())
	}
	return ok
}
