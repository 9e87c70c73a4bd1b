// Package canonical serialises JSON values canonically (DESIGN.md §5): object keys sorted,
// no whitespace, empty fields left out (an object field whose value is null, "", or an object
// or array that is empty once pruned). Array elements keep their positions: an element that
// prunes to nothing stays as its empty form ("", null, {} or []), so ["", "x"] and ["x"]
// differ. The service
// desk's approval signatures and the generated addresses' integrity signatures cover it.
package canonical

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Marshal returns the canonical form of v (anything encoding/json accepts).
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical: %w", err)
	}
	return FromJSON(raw)
}

// FromJSON returns the canonical form of a JSON document.
func FromJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonical: trailing data after the JSON value")
	}
	var buf bytes.Buffer
	write(&buf, prune(v))
	return buf.Bytes(), nil
}

// prune drops empty values; it returns nil when v itself is empty.
func prune(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		if t == "" {
			return nil
		}
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			if p := prune(e); p != nil {
				out[k] = p
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, 0, len(t))
		for _, e := range t {
			out = append(out, element(e))
		}
		return out
	}
	return v
}

// element prunes an array element but keeps its place: what prunes to nothing stays empty.
func element(e any) any {
	if p := prune(e); p != nil {
		return p
	}
	switch e.(type) {
	case map[string]any:
		return map[string]any{}
	case []any:
		return []any{}
	}
	return e
}

func write(buf *bytes.Buffer, v any) {
	switch t := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case json.Number:
		buf.WriteString(t.String())
	case string:
		writeString(buf, t)
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			write(buf, e)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			write(buf, t[k])
		}
		buf.WriteByte('}')
	}
}

// writeString writes s as a JSON string the way JavaScript's JSON.stringify does (the
// reference clients sign with json-stable-stringify): UTF-8 as is, no HTML escaping.
func writeString(buf *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
}
