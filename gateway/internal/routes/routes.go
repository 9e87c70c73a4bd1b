// Package routes reads the HTTP rule file so the gateway knows, for any request path, which
// methods it serves (the Allow header of a 405) and whether the contract sends submitter-id.
package routes

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Route is one mapped method and path.
type Route struct {
	Method   string
	Template string
	Selector string
	pattern  *regexp.Regexp
}

// Table is the set of routes of the rule file.
type Table struct {
	routes []Route
}

type ruleFile struct {
	HTTP struct {
		Rules []map[string]any `yaml:"rules"`
	} `yaml:"http"`
}

var httpMethods = []string{"get", "post", "put", "patch", "delete"}

var variable = regexp.MustCompile(`\{[^/}]+\}`)

// Parse reads a grpc-gateway rule file.
func Parse(data []byte) (*Table, error) {
	var f ruleFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse rules: %w", err)
	}
	t := &Table{}
	for _, rule := range f.HTTP.Rules {
		selector, _ := rule["selector"].(string)
		for _, m := range httpMethods {
			tmpl, ok := rule[m].(string)
			if !ok {
				continue
			}
			// QuoteMeta escapes the braces; undo that before substituting the variables. A variable
			// may be empty, as grpc-gateway routes it: the service then reports the missing value.
			expr := "^" + variable.ReplaceAllString(strings.NewReplacer(`\{`, "{", `\}`, "}").Replace(regexp.QuoteMeta(tmpl)), "[^/]*") + "$"
			t.routes = append(t.routes, Route{Method: strings.ToUpper(m), Template: tmpl, Selector: selector, pattern: regexp.MustCompile(expr)})
		}
	}
	if len(t.routes) == 0 {
		return nil, fmt.Errorf("parse rules: no routes")
	}
	return t, nil
}

// Match returns the route of method and path, if any.
func (t *Table) Match(method, path string) (Route, bool) {
	for _, r := range t.routes {
		if r.Method == method && r.pattern.MatchString(path) {
			return r, true
		}
	}
	return Route{}, false
}

// Allowed returns the methods served on path, sorted.
func (t *Table) Allowed(path string) []string {
	var out []string
	for _, r := range t.routes {
		if r.pattern.MatchString(path) && !slices.Contains(out, r.Method) {
			out = append(out, r.Method)
		}
	}
	slices.Sort(out)
	return out
}

// Routes returns every route.
func (t *Table) Routes() []Route { return slices.Clone(t.routes) }
