package testdb

import (
	"context"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
)

// shapesOf returns the shapes recorded per collection, as strings.
func shapesOf(r *Shapes) map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for col, shapes := range r.seen {
		out[col] = slices.Sorted(maps.Keys(shapes))
	}
	return out
}

func raw(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShapesOfCommands: the shape of each kind of query command, $and multiplied out and
// $or split into branches.
func TestShapesOfCommands(t *testing.T) {
	t.Parallel()
	r := NewShapes()
	in := func(v ...any) bson.D { return bson.D{{Key: "$in", Value: bson.A(v)}} }
	scope := bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "companyId", Value: "C"}}, bson.D{{Key: "venueId", Value: in("V1", "V2")}}}}}
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "w"}, {Key: "filter", Value: bson.D{{Key: "$and", Value: bson.A{scope, bson.D{{Key: "status", Value: in("A")}}}}}},
			{Key: "sort", Value: bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}}, {Key: "limit", Value: 10}},
		{{Key: "aggregate", Value: "w"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "companyId", Value: "C"}, {Key: "n", Value: bson.D{{Key: "$gte", Value: 1}, {Key: "$lt", Value: 5}}}}}},
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}}}},
		}}},
		{{Key: "aggregate", Value: "w"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$sort", Value: bson.D{{Key: "k", Value: 1}}}}}}},
		{{Key: "update", Value: "w"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: "x"}, {Key: "v", Value: bson.D{{Key: "$eq", Value: 3}}}}}, {Key: "u", Value: bson.D{}}},
			bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$ne", Value: 1}}}, {Key: "b", Value: bson.D{{Key: "$exists", Value: true}}}}}, {Key: "u", Value: bson.D{}}},
		}}},
		{{Key: "delete", Value: "r"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}},
		{{Key: "findAndModify", Value: "r"}, {Key: "query", Value: bson.D{{Key: "doc", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "sort", Value: bson.D{{Key: "at", Value: 1}}}},
		{{Key: "insert", Value: "r"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}},
		{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{}}},
	} {
		r.record(cmd[0].Key, raw(t, cmd))
	}
	want := map[string][]string{
		"w": {
			"aggregate eq(companyId) range(n)",
			"aggregate sort(k)",
			"find eq(companyId) in(status) sort(-createdAt -_id)",
			"find in(status venueId) sort(-createdAt -_id)",
			"update eq(_id v)",
			"update other(a b)",
		},
		"r": {"delete {}", "findAndModify eq(doc) sort(at)"},
	}
	if diff := cmp.Diff(want, shapesOf(r)); diff != "" {
		t.Errorf("shapes (-want +got):\n%s", diff)
	}
}

// TestCovers: what an index covers and, above all, what it does not, so that the index check
// cannot pass a query that would scan.
func TestCovers(t *testing.T) {
	t.Parallel()
	companyCreated := mongodb.Index{Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")}
	statusCreated := mongodb.Index{Name: "status_created", Keys: bson.D{{Key: "status", Value: 1}, {Key: "createdAt", Value: -1}}}
	pair := mongodb.Index{Name: "wallet_currency", Keys: mongodb.Keys("walletId", "currencyId"), Unique: true}
	sparse := mongodb.Index{Name: "open_until", Keys: mongodb.Keys("openUntil"), Sparse: true}
	tests := []struct {
		name  string
		index mongodb.Index
		shape Shape
		want  bool
	}{
		{"equality then sort", companyCreated, Shape{Eq: []string{"companyId"}, Sort: []string{"createdAt", "_id"}}, true},
		{"sort reversed", companyCreated, Shape{Eq: []string{"companyId"}, Sort: []string{"-createdAt", "-_id"}}, true},
		{"equality alone", companyCreated, Shape{Eq: []string{"companyId"}}, true},
		{"$in filters narrow the scan", companyCreated, Shape{Eq: []string{"companyId"}, In: []string{"status"}, Sort: []string{"createdAt", "_id"}}, true},
		{"range after the sort", statusCreated, Shape{Eq: []string{"status"}, Range: []string{"createdAt"}, Sort: []string{"-createdAt"}}, true},
		{"$in leading, merged per value", statusCreated, Shape{In: []string{"status"}, Sort: []string{"createdAt"}}, true},
		{"sort key fixed by equality", pair, Shape{Eq: []string{"walletId"}, Sort: []string{"walletId", "currencyId"}}, true},
		{"unique index bound", pair, Shape{Eq: []string{"walletId"}, In: []string{"currencyId"}, Sort: []string{"createdAt"}}, true},
		{"sparse index bounded", sparse, Shape{Range: []string{"openUntil"}}, true},

		{"sort not covered", companyCreated, Shape{Eq: []string{"companyId"}, Sort: []string{"updatedAt", "_id"}}, false},
		{"sort without its tie-breaker", statusCreated, Shape{Eq: []string{"status"}, Sort: []string{"-createdAt", "-_id"}}, false},
		{"sort in mixed directions", companyCreated, Shape{Eq: []string{"companyId"}, Sort: []string{"createdAt", "-_id"}}, false},
		{"equality on a field without index", companyCreated, Shape{Eq: []string{"companyId", "email"}}, false},
		{"equality on a later key", companyCreated, Shape{Eq: []string{"createdAt"}}, false},
		{"sort skipping an unbound key", companyCreated, Shape{Sort: []string{"createdAt", "_id"}}, false},
		{"$in lists not leading", mongodb.Index{Name: "created_id", Keys: mongodb.Keys("createdAt", "_id")},
			Shape{In: []string{"venueId"}, Sort: []string{"createdAt", "_id"}}, false},
		{"no filter, no sort", companyCreated, Shape{}, false},
		{"a range on a later key", companyCreated, Shape{Range: []string{"createdAt"}}, false},
		{"other tests only", companyCreated, Shape{Other: []string{"companyId"}}, false},
		{"unique index half bound", pair, Shape{Eq: []string{"walletId"}, Sort: []string{"createdAt"}}, false},
		{"sparse index unbounded", sparse, Shape{Sort: []string{"openUntil"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Covers(tt.index, tt.shape); got != tt.want {
				t.Errorf("Covers(%s, %s) = %v, want %v", describe(tt.index), tt.shape, got, tt.want)
			}
		})
	}
}

// TestCheck: the check reports every shape no index of its collection covers, with the
// collection, the shape and the indexes, and passes the allowed ones; _id is always indexed.
func TestCheck(t *testing.T) {
	t.Parallel()
	r := NewShapes()
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "wallets"}, {Key: "filter", Value: bson.D{{Key: "companyId", Value: "C"}}}, {Key: "sort", Value: bson.D{{Key: "createdAt", Value: 1}}}},
		{{Key: "find", Value: "wallets"}, {Key: "filter", Value: bson.D{{Key: "companyId", Value: "C"}}}, {Key: "sort", Value: bson.D{{Key: "name", Value: 1}}}},
		{{Key: "find", Value: "wallets"}, {Key: "filter", Value: bson.D{{Key: "ownerId", Value: "U"}}}},
		{{Key: "find", Value: "wallets"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: "W"}, {Key: "ownerId", Value: "U"}}}},
		{{Key: "aggregate", Value: "wallets"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}}},
		{{Key: "delete", Value: "prices"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}}}}},
	} {
		r.record(cmd[0].Key, raw(t, cmd))
	}
	indexes := []mongodb.Index{
		{Collection: "wallets", Name: "company_created", Keys: mongodb.Keys("companyId", "createdAt")},
		{Collection: "prices", Name: "owner", Keys: mongodb.Keys("ownerId")}, // another collection's
	}
	all, uncovered := r.Check(indexes, map[string]string{
		"wallets aggregate {}":         "the test counts every wallet",
		"wallets find eq(_id ownerId)": "stale",
	})
	wantUncovered := []string{
		"prices: delete {} is covered by no index of _id_(_id), owner(ownerId)",
		"wallets: find eq(_id ownerId) by _id_(_id), yet allowed to scan: drop it from the list",
		"wallets: find eq(companyId) sort(name) is covered by no index of _id_(_id), company_created(companyId createdAt)",
		"wallets: find eq(ownerId) is covered by no index of _id_(_id), company_created(companyId createdAt)",
	}
	if diff := cmp.Diff(wantUncovered, uncovered); diff != "" {
		t.Errorf("uncovered (-want +got):\n%s", diff)
	}
	wantAll := []string{
		wantUncovered[0],
		"wallets: aggregate {} scans: the test counts every wallet",
		wantUncovered[1],
		"wallets: find eq(companyId) sort(createdAt) by company_created(companyId createdAt)",
		wantUncovered[2], wantUncovered[3],
	}
	if diff := cmp.Diff(wantAll, all); diff != "" {
		t.Errorf("all (-want +got):\n%s", diff)
	}
}

// TestShapesOnTheWire: a monitored client records the queries as the server receives them,
// those the driver sends as document sequences (updates, deletes) included.
func TestShapesOnTheWire(t *testing.T) {
	t.Parallel()
	name := New(t).Name() // skips, or fails under CI, without a database
	r := NewShapes()
	client, err := mongodb.ConnectWith(context.Background(), mongodb.ClientOptions(os.Getenv("MONGODB_URI")).SetMonitor(r.Monitor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	coll := client.Database(name).Collection("c")
	ctx := context.Background()
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "a"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "k", Value: 1}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mongodb.Search[bson.D](ctx, coll, mongodb.Query{Filter: bson.D{{Key: "k", Value: 1}}, Sort: mongodb.Sorted("n", true), Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteMany(ctx, bson.D{{Key: "n", Value: bson.D{{Key: "$lt", Value: 0}}}}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"c": {"aggregate eq(k)", "delete range(n)", "find eq(k) sort(-n -_id)", "update eq(_id)"}}
	if diff := cmp.Diff(want, shapesOf(r)); diff != "" {
		t.Errorf("shapes (-want +got):\n%s", diff)
	}
}
