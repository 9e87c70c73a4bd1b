// Command openapidoc finishes the OpenAPI document that protoc-gen-connect-openapi generates
// from the protos and the hand-written base (gateway/openapi/base.yaml), and writes it as YAML
// and JSON for the gateway to serve. It works on the parsed document, never on its text:
//
//   - an array schema without items gets `items: {}`;
//   - schemas no operation reaches (the messages of internal services) are dropped;
//   - schema names lose their proto package (`custody.v1.Wallet` becomes `Wallet`), so the
//     document never names a gRPC package; two messages of one name are an error;
//   - path parameters take the JSON names of their fields (`{wallet_id}` becomes `{walletId}`),
//     as a client sees every other field; the wire path is the same;
//   - every operation takes the signing headers of the base's components.parameters, and each
//     header an annotation declares inline becomes a $ref to the component of the same name
//     and requirement (an inline header without one is an error: declare it in the base);
//   - every operation lists the error responses the gateway can send for any route (400, 401,
//     403, 413 and 415 with a body, 429, 500, 503, 504) beside those its annotation declares,
//     and its 200 response the echoed request-identifier header.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// signingHeaders are the components.parameters every operation takes, in this order.
var signingHeaders = []string{"CompanyIdentifier", "RequestIdentifier", "RequestTimestamp"}

// errorResponses are the components.responses every operation lists, by status.
var errorResponses = []struct {
	status, name string
	bodyOnly     bool
}{
	{"400", "BadRequest", false},
	{"401", "Unauthorized", false},
	{"403", "Forbidden", false},
	{"413", "PayloadTooLarge", true},
	{"415", "UnsupportedMediaType", true},
	{"429", "TooManyRequests", false},
	{"500", "InternalServerError", false},
	{"503", "ServiceUnavailable", false},
	{"504", "GatewayTimeout", false},
}

var httpMethods = []string{"get", "put", "post", "delete", "patch"}

func main() {
	in := flag.String("in", "", "the generated document (YAML)")
	out := flag.String("out", "", "folder to write openapi.yaml and openapi.json into")
	flag.Parse()
	if *in == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapidoc:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not an OpenAPI document", in)
	}
	root := doc.Content[0]
	if err := finish(root); err != nil {
		return err
	}
	var y bytes.Buffer
	enc := yaml.NewEncoder(&y)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	var j bytes.Buffer
	if err := writeJSON(&j, root); err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, j.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	pretty.WriteByte('\n')
	if err := os.WriteFile(filepath.Join(out, "openapi.yaml"), y.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "openapi.json"), pretty.Bytes(), 0o644)
}

func finish(root *yaml.Node) error {
	components := get(root, "components")
	if components == nil {
		return errors.New("no components: is the base document merged?")
	}
	if err := webhooks(root, components); err != nil {
		return err
	}
	pruneSchemas(root, get(components, "schemas"))
	arrayItems(root)
	if err := shortSchemaNames(root, get(components, "schemas")); err != nil {
		return err
	}
	params := get(components, "parameters")
	for _, name := range signingHeaders {
		if get(params, name) == nil {
			return fmt.Errorf("components.parameters.%s is missing from the base document", name)
		}
	}
	responses := get(components, "responses")
	for _, r := range errorResponses {
		if get(responses, r.name) == nil {
			return fmt.Errorf("components.responses.%s is missing from the base document", r.name)
		}
	}
	paths := get(root, "paths")
	if paths == nil {
		return errors.New("no paths")
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		camelPath(paths.Content[i], paths.Content[i+1])
		path, item := paths.Content[i].Value, paths.Content[i+1]
		for _, m := range httpMethods {
			op := get(item, m)
			if op == nil {
				continue
			}
			if err := headers(op, params); err != nil {
				return fmt.Errorf("%s %s: %w", strings.ToUpper(m), path, err)
			}
			if err := errorsOf(op); err != nil {
				return fmt.Errorf("%s %s: %w", strings.ToUpper(m), path, err)
			}
		}
	}
	orderRoot(root)
	return nil
}

// rootOrder is the order of the document's top-level keys, for a reader.
var rootOrder = []string{"openapi", "info", "jsonSchemaDialect", "servers", "security", "tags", "paths", "webhooks", "components", "externalDocs"}

func orderRoot(root *yaml.Node) {
	rank := func(k string) int {
		if i := slices.Index(rootOrder, k); i >= 0 {
			return i
		}
		return len(rootOrder)
	}
	sortKeys(root, func(a, b string) int { return rank(a) - rank(b) })
}

// sortKeys orders mapping m's members by their keys, stably.
func sortKeys(m *yaml.Node, cmp func(a, b string) int) {
	type pair struct{ k, v *yaml.Node }
	pairs := make([]pair, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		pairs = append(pairs, pair{m.Content[i], m.Content[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp(a.k.Value, b.k.Value) })
	m.Content = m.Content[:0]
	for _, p := range pairs {
		m.Content = append(m.Content, p.k, p.v)
	}
}

// arrayItems gives every array schema without items an explicit `items: {}` (any value), as
// JSON Schema means it and linters require it (google.protobuf.Value's list branch).
func arrayItems(root *yaml.Node) {
	walk(root, func(m *yaml.Node) {
		if scalar(m, "type") == "array" && get(m, "items") == nil {
			set(m, "items", &yaml.Node{Kind: yaml.MappingNode})
		}
	})
}

// pruneSchemas drops the schemas that nothing outside components.schemas reaches.
func pruneSchemas(root, schemas *yaml.Node) {
	if schemas == nil {
		return
	}
	const prefix = "#/components/schemas/"
	refs := func(n *yaml.Node) (out []string) {
		walk(n, func(m *yaml.Node) {
			if v := scalar(m, "$ref"); strings.HasPrefix(v, prefix) {
				out = append(out, strings.TrimPrefix(v, prefix))
			}
		})
		return out
	}
	var queue []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "components" {
			queue = append(queue, refs(root.Content[i+1])...)
			continue
		}
		c := root.Content[i+1]
		for j := 0; j+1 < len(c.Content); j += 2 {
			if c.Content[j].Value != "schemas" {
				queue = append(queue, refs(c.Content[j+1])...)
			}
		}
	}
	reached := map[string]bool{}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if reached[name] {
			continue
		}
		reached[name] = true
		if s := get(schemas, name); s != nil {
			queue = append(queue, refs(s)...)
		}
	}
	kept := schemas.Content[:0]
	for i := 0; i+1 < len(schemas.Content); i += 2 {
		if reached[schemas.Content[i].Value] {
			kept = append(kept, schemas.Content[i], schemas.Content[i+1])
		}
	}
	schemas.Content = kept
}

// shortSchemaNames drops the proto package from every schema name and every reference to it.
func shortSchemaNames(root, schemas *yaml.Node) error {
	if schemas == nil {
		return nil
	}
	renamed := map[string]string{}
	taken := map[string]string{}
	for i := 0; i+1 < len(schemas.Content); i += 2 {
		full := schemas.Content[i].Value
		short := full[strings.LastIndex(full, ".")+1:]
		if other, ok := taken[short]; ok {
			return fmt.Errorf("schemas %s and %s would both be named %s", other, full, short)
		}
		taken[short] = full
		renamed["#/components/schemas/"+full] = "#/components/schemas/" + short
		schemas.Content[i].Value = short
	}
	walk(root, func(n *yaml.Node) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "$ref" {
				if to, ok := renamed[n.Content[i+1].Value]; ok {
					n.Content[i+1].Value = to
				}
			}
		}
	})
	return nil
}

// camelPath renames the path's variables and its operations' path parameters to lowerCamel.
func camelPath(key, item *yaml.Node) {
	parts := strings.Split(key.Value, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			parts[i] = "{" + lowerCamel(p[1:len(p)-1]) + "}"
		}
	}
	key.Value = strings.Join(parts, "/")
	for _, m := range httpMethods {
		list := get(get(item, m), "parameters")
		if list == nil {
			continue
		}
		for _, p := range list.Content {
			if scalar(p, "in") != "path" {
				continue
			}
			set(p, "name", str(lowerCamel(scalar(p, "name"))))
			if schema := get(p, "schema"); schema != nil && get(schema, "title") != nil {
				set(schema, "title", str(lowerCamel(scalar(schema, "title"))))
			}
		}
	}
}

// lowerCamel turns a proto field name into its JSON name, as protoc does.
func lowerCamel(name string) string {
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

// headers puts the signing headers first and replaces each inline header by its component.
func headers(op, components *yaml.Node) error {
	list := get(op, "parameters")
	if list == nil {
		list = &yaml.Node{Kind: yaml.SequenceNode}
		set(op, "parameters", list)
	}
	out := make([]*yaml.Node, 0, len(list.Content)+len(signingHeaders))
	for _, name := range signingHeaders {
		out = append(out, ref("#/components/parameters/"+name))
	}
	for _, p := range list.Content {
		if scalar(p, "in") != "header" {
			out = append(out, p)
			continue
		}
		name, required := scalar(p, "name"), scalar(p, "required") == "true"
		component := ""
		for i := 0; i+1 < len(components.Content); i += 2 {
			c := components.Content[i+1]
			if scalar(c, "in") == "header" && strings.EqualFold(scalar(c, "name"), name) && (scalar(c, "required") == "true") == required {
				component = components.Content[i].Value
				break
			}
		}
		if component == "" {
			return fmt.Errorf("header %s (required %t) has no component in the base document", name, required)
		}
		if slices.Contains(signingHeaders, component) {
			continue
		}
		out = append(out, ref("#/components/parameters/"+component))
	}
	list.Content = out
	return nil
}

// errorsOf adds the error responses every route can send, and the echoed request id on 200.
func errorsOf(op *yaml.Node) error {
	responses := get(op, "responses")
	if responses == nil {
		return errors.New("no responses")
	}
	ok := get(responses, "200")
	if ok == nil {
		return errors.New("no 200 response")
	}
	h := get(ok, "headers")
	if h == nil {
		h = &yaml.Node{Kind: yaml.MappingNode}
		set(ok, "headers", h)
	}
	set(h, "request-identifier", ref("#/components/headers/RequestIdentifier"))
	hasBody := get(op, "requestBody") != nil
	for _, r := range errorResponses {
		if r.bodyOnly && !hasBody {
			continue
		}
		if get(responses, r.status) == nil {
			set(responses, r.status, ref("#/components/responses/"+r.name))
		}
	}
	sortKeys(responses, strings.Compare)
	return nil
}

func ref(to string) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("$ref"), str(to)}}
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// get returns the value of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(m *yaml.Node, key string) string {
	if v := get(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// set replaces or appends key in mapping m.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, str(key), v)
}

func walk(n *yaml.Node, f func(*yaml.Node)) {
	if n.Kind == yaml.MappingNode {
		f(n)
	}
	for _, c := range n.Content {
		walk(c, f)
	}
}

// writeJSON writes n as JSON, keeping the order of mapping keys.
func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(b, n)
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	default:
		return fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	return nil
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		v, err := strconv.ParseBool(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		var v json.Number
		if err := json.Unmarshal([]byte(n.Value), &v); err != nil {
			return fmt.Errorf("line %d: number %q: %w", n.Line, n.Value, err)
		}
		b.WriteString(v.String())
	default:
		s, _ := json.Marshal(n.Value)
		b.Write(s)
	}
	return nil
}
