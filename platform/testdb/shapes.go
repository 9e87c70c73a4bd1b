package testdb

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/zcustody/suite/platform/mongodb"
)

// Shape is the form of one query as the server receives it: the fields its filter tests and
// how, and its sort; values do not matter. A filter with $or has one shape per branch (each
// branch is its own index scan), the conditions around the $or added to each.
type Shape struct {
	// Command carries the query: find, count, distinct, aggregate (its leading $match and
	// $sort), update, delete or findAndModify.
	Command string
	// Eq are the fields compared for equality: {f: v} or $eq. They are the query's scope or
	// the key it looks up, which its index must hold.
	Eq []string
	// In are the fields matched against a list ($in, even of one value): the optional filters
	// of the searches (mongodb.AppendIn), which narrow the scan of the scope without an index
	// of their own.
	In []string
	// Range are the fields bounded by $gt, $gte, $lt or $lte.
	Range []string
	// Other are the fields tested in ways no index bound serves ($ne, $exists, $elemMatch,
	// $nor...).
	Other []string
	// Sort is the sort, in order; a descending key has a leading "-".
	Sort []string
}

// String is the shape as the checker's messages and allowlists name it, e.g.
// "find eq(companyId) sort(createdAt _id)"; a query of the whole collection is "find {}".
func (s Shape) String() string {
	parts := []string{s.Command}
	for _, g := range []struct {
		name   string
		fields []string
	}{{"eq", s.Eq}, {"in", s.In}, {"range", s.Range}, {"other", s.Other}, {"sort", s.Sort}} {
		if len(g.fields) > 0 {
			parts = append(parts, g.name+"("+strings.Join(g.fields, " ")+")")
		}
	}
	if len(parts) == 1 {
		parts = append(parts, "{}")
	}
	return strings.Join(parts, " ")
}

// test is how a filter tests a field, weakest first: a field tested twice keeps the
// strongest test.
type test int

const (
	untested test = iota
	otherTest
	rangeTest
	inTest
	eqTest
)

// conjunction maps the fields of one branch of a filter to their test.
type conjunction map[string]test

// and is every combination of one conjunction of a and one of b.
func and(a, b []conjunction) []conjunction {
	out := make([]conjunction, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			c := maps.Clone(x)
			for f, t := range y {
				c[f] = max(c[f], t)
			}
			out = append(out, c)
		}
	}
	return out
}

// branches is filter as a disjunction of conjunctions: $and multiplies out, $or adds
// branches.
func branches(filter bson.Raw) []conjunction {
	out := []conjunction{{}}
	elems, _ := filter.Elements()
	for _, e := range elems {
		switch key := e.Key(); key {
		case "$and", "$or":
			items := values(e.Value())
			var terms []conjunction
			if key == "$and" {
				terms = []conjunction{{}}
			}
			for _, item := range items {
				doc, _ := item.DocumentOK()
				if key == "$and" {
					terms = and(terms, branches(doc))
				} else {
					terms = append(terms, branches(doc)...)
				}
			}
			out = and(out, terms)
		default:
			// An operator at the top ($nor, $expr...) is kept under its own name.
			out = and(out, []conjunction{{key: testOf(key, e.Value())}})
		}
	}
	return out
}

// values are the elements of array v (none if v is no array).
func values(v bson.RawValue) []bson.RawValue {
	a, _ := v.ArrayOK()
	out, _ := a.Values()
	return out
}

// testOf is how the condition v on field key tests it.
func testOf(key string, v bson.RawValue) test {
	if strings.HasPrefix(key, "$") {
		return otherTest
	}
	if _, _, ok := v.RegexOK(); ok {
		return otherTest
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return eqTest
	}
	ops, _ := doc.Elements()
	if len(ops) == 0 || !strings.HasPrefix(ops[0].Key(), "$") {
		return eqTest // a whole embedded document
	}
	t := untested
	for _, op := range ops {
		switch op.Key() {
		case "$eq":
			t = max(t, eqTest)
		case "$in":
			t = max(t, inTest)
		case "$gt", "$gte", "$lt", "$lte":
			t = max(t, rangeTest)
		default:
			t = max(t, otherTest)
		}
	}
	return t
}

// sortKeys is a sort document as Shape.Sort.
func sortKeys(sort bson.Raw) []string {
	var out []string
	elems, _ := sort.Elements()
	for _, e := range elems {
		if n, ok := e.Value().AsInt64OK(); ok && n < 0 {
			out = append(out, "-"+e.Key())
		} else {
			out = append(out, e.Key())
		}
	}
	return out
}

// shapes are the shapes of a query with filter and sort.
func shapes(command string, filter, sort bson.Raw) []Shape {
	var out []Shape
	for _, c := range branches(filter) {
		s := Shape{Command: command, Sort: sortKeys(sort)}
		for _, f := range slices.Sorted(maps.Keys(c)) {
			switch c[f] {
			case eqTest:
				s.Eq = append(s.Eq, f)
			case inTest:
				s.In = append(s.In, f)
			case rangeTest:
				s.Range = append(s.Range, f)
			default:
				s.Other = append(s.Other, f)
			}
		}
		out = append(out, s)
	}
	return out
}

// Shapes records the query shapes of the commands a client sends, per collection.
type Shapes struct {
	mu   sync.Mutex
	seen map[string]map[string]Shape // collection, Shape.String()
}

// NewShapes returns an empty record.
func NewShapes() *Shapes { return &Shapes{seen: map[string]map[string]Shape{}} }

// Monitor is the command monitor that feeds the record (options.Client().SetMonitor).
func (r *Shapes) Monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		r.record(e.CommandName, e.Command)
	}}
}

// record adds the shapes of the query cmd carries, if it is one.
func (r *Shapes) record(name string, cmd bson.Raw) {
	collection, ok := cmd.Lookup(name).StringValueOK()
	if !ok {
		return // a command on the database (aggregate: 1) or a command without a collection
	}
	doc := func(v bson.Raw, key string) bson.Raw {
		d, _ := v.Lookup(key).DocumentOK()
		return d
	}
	var found []Shape
	switch name {
	case "find":
		found = shapes(name, doc(cmd, "filter"), doc(cmd, "sort"))
	case "count", "distinct":
		found = shapes(name, doc(cmd, "query"), nil)
	case "findAndModify":
		found = shapes(name, doc(cmd, "query"), doc(cmd, "sort"))
	case "update", "delete":
		list := map[string]string{"update": "updates", "delete": "deletes"}[name]
		for _, st := range values(cmd.Lookup(list)) {
			d, _ := st.DocumentOK()
			found = append(found, shapes(name, doc(d, "q"), nil)...)
		}
	case "aggregate":
		// The leading $match and the $sort right after it are what an index can serve.
		var filter, sort bson.Raw
		for i, st := range values(cmd.Lookup("pipeline")) {
			d, _ := st.DocumentOK()
			if m, ok := d.Lookup("$match").DocumentOK(); ok && i == 0 {
				filter = m
				continue
			}
			sort, _ = d.Lookup("$sort").DocumentOK()
			break
		}
		found = shapes(name, filter, sort)
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[collection] == nil {
		r.seen[collection] = map[string]Shape{}
	}
	for _, s := range found {
		r.seen[collection][s.String()] = s
	}
}

// idIndex is the index every collection has.
var idIndex = mongodb.Index{Name: "_id_", Keys: mongodb.Keys("_id"), Unique: true}

// Covers reports whether ix serves s as an index scan plus a page. The index's leading keys
// are every equality field of s, in any order, and any of its $in fields (MongoDB merges one
// scan per value), at least one of those when s has no equality field; then come s's sort
// keys in order, all in the index's directions or all reversed (a sort key s fixes by
// equality orders nothing); range fields may follow. Without equality fields or a sort, the
// leading key must be a range field, or the scan is the whole index. A unique index whose
// every key is an equality or $in field covers any sort (the matches are as few as the
// values), as the _id index covers every query of _id. A sparse index serves only a filter
// that bounds its first key (it lacks the documents without it).
func Covers(ix mongodb.Index, s Shape) bool {
	tests := map[string]test{}
	for _, g := range []struct {
		fields []string
		t      test
	}{{s.Other, otherTest}, {s.Range, rangeTest}, {s.In, inTest}, {s.Eq, eqTest}} {
		for _, f := range g.fields {
			tests[f] = g.t
		}
	}
	keys := ix.Keys
	if len(keys) == 0 || ix.Sparse && tests[keys[0].Key] < rangeTest {
		return false
	}
	prefix := 0
	for prefix < len(keys) && tests[keys[prefix].Key] >= inTest {
		prefix++
	}
	if ix.Unique && prefix == len(keys) {
		return true
	}
	if len(s.Eq) == 0 && len(s.In) > 0 && prefix == 0 {
		return false // the lists are all the filter has: a scan must start from one
	}
	for _, f := range s.Eq {
		if !slices.ContainsFunc(keys[:prefix], func(e bson.E) bool { return e.Key == f }) {
			return false
		}
	}
	// A sort key the filter fixes orders nothing.
	sort := slices.DeleteFunc(slices.Clone(s.Sort), func(k string) bool { return tests[strings.TrimPrefix(k, "-")] == eqTest })
	if len(keys)-prefix < len(sort) {
		return false
	}
	reversed := false
	for i, k := range sort {
		key := keys[prefix+i]
		field, desc := strings.TrimPrefix(k, "-"), strings.HasPrefix(k, "-")
		if key.Key != field {
			return false
		}
		flip := desc != descending(key.Value)
		if i == 0 {
			reversed = flip
		} else if flip != reversed {
			return false
		}
	}
	return prefix > 0 || len(sort) > 0 || tests[keys[0].Key] == rangeTest
}

// descending reports whether an index key's direction is descending.
func descending(dir any) bool {
	switch d := dir.(type) {
	case int:
		return d < 0
	case int32:
		return d < 0
	case int64:
		return d < 0
	case float64:
		return d < 0
	}
	return false
}

// Check checks each recorded shape against the indexes of its collection (indexes may name
// other collections too; every collection has its _id index) and returns one line per
// shape, sorted: the collection, the shape and what serves it, the first index that covers
// it or the reason allowed gives for its scan ("<collection> <shape>" names it, e.g.
// "wallets aggregate {}"). The lines of the shapes neither covered nor allowed are returned
// apart, each naming the collection's indexes, and so are those both covered and allowed
// (the list must not outlive the scans).
func (r *Shapes) Check(indexes []mongodb.Index, allowed map[string]string) (all, uncovered []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, collection := range slices.Sorted(maps.Keys(r.seen)) {
		declared := []mongodb.Index{idIndex}
		for _, ix := range indexes {
			if ix.Collection == collection {
				declared = append(declared, ix)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(r.seen[collection])) {
			s := r.seen[collection][key]
			line := collection + ": " + key
			why, ok := allowed[collection+" "+key]
			if i := slices.IndexFunc(declared, func(ix mongodb.Index) bool { return Covers(ix, s) }); i >= 0 {
				line += " by " + describe(declared[i])
				if ok {
					line += ", yet allowed to scan: drop it from the list"
					uncovered = append(uncovered, line)
				}
				all = append(all, line)
				continue
			}
			if ok {
				all = append(all, line+" scans: "+why)
				continue
			}
			names := make([]string, len(declared))
			for i, ix := range declared {
				names[i] = describe(ix)
			}
			line += " is covered by no index of " + strings.Join(names, ", ")
			all, uncovered = append(all, line), append(uncovered, line)
		}
	}
	return all, uncovered
}

// describe names an index and its keys, e.g. "company_created(companyId createdAt)".
func describe(ix mongodb.Index) string {
	keys := make([]string, len(ix.Keys))
	for i, k := range ix.Keys {
		keys[i] = k.Key
		if descending(k.Value) {
			keys[i] = "-" + k.Key
		}
	}
	return ix.Name + "(" + strings.Join(keys, " ") + ")"
}

// recording, when set, records the commands of every database New returns.
var recording *Shapes

// CheckIndexes runs m's tests (call it from TestMain) with every database New returns
// recording the shapes of its queries, then checks each against indexes, the indexes the
// package's stores declare, so that on MongoDB every query is an index scan plus a page: a
// shape no index covers fails the run with a line naming the collection, the shape and the
// collection's indexes, unless allowed gives the reason it may scan (see Check). With -v, it
// lists every shape and what serves it. It returns the exit code for os.Exit.
func CheckIndexes(m *testing.M, indexes []mongodb.Index, allowed map[string]string) int {
	recording = NewShapes()
	code := m.Run()
	all, uncovered := recording.Check(indexes, allowed)
	if testing.Verbose() {
		fmt.Printf("query shapes:\n\t%s\n", strings.Join(all, "\n\t"))
	}
	if len(uncovered) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d query shape(s) without an index (declare one, or allow the scan with a reason):\n\t%s\n",
			len(uncovered), strings.Join(uncovered, "\n\t"))
		code = 1
	}
	return code
}
