package jsonpb

import "google.golang.org/protobuf/proto"

// Fast reports whether the walk renders msg itself, without protojson.
func (m *Marshaler) Fast(msg proto.Message) bool {
	e := m.encoder()
	defer m.release(e)
	r := msg.ProtoReflect()
	return m.fast && r.IsValid() && e.message(m.plan(r.Descriptor()), r)
}
