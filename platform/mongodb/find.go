package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// SearchTimeout bounds the server time of one search query (and of its count): a caller with a
// later deadline, or none, gets this one. With the client timeout set (ClientOptions), the
// driver sends every command with maxTimeMS, the time left before the deadline, so the server
// itself stops a search nobody waits for any more.
const SearchTimeout = 5 * time.Second

// Query is one bounded read: a page of a filter, sorted.
type Query struct {
	Filter     any
	Sort       bson.D
	Projection any
	Skip       int64
	// Limit is the page size, at least 1: a query without one is not a page.
	Limit int64
}

// filter is the query's filter; none matches every document.
func (q Query) filter() any {
	if q.Filter == nil {
		return bson.D{}
	}
	return q.Filter
}

// ErrPageTooLarge reports a page whose documents do not fit one reply (16 MiB): a defect of
// the store (documents must stay bounded), never silently truncated.
var ErrPageTooLarge = errors.New("mongodb: the page does not fit one reply")

// FindPage reads one page of coll as a single find command, each document decoded as a T.
// Unlike Collection.Find, whose cursor the driver sends without maxTimeMS (DRIVERS-2722), the
// command carries the deadline to the server. The page is one batch: nothing is left open.
func FindPage[T any](ctx context.Context, coll *mongo.Collection, q Query) ([]T, error) {
	if q.Limit < 1 {
		return nil, fmt.Errorf("find %s: a page needs a limit", coll.Name())
	}
	ctx, cancel := searchContext(ctx)
	defer cancel()
	cmd := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: q.filter()}}
	if len(q.Sort) > 0 {
		cmd = append(cmd, bson.E{Key: "sort", Value: q.Sort})
	}
	if q.Projection != nil {
		cmd = append(cmd, bson.E{Key: "projection", Value: q.Projection})
	}
	if q.Skip > 0 {
		cmd = append(cmd, bson.E{Key: "skip", Value: q.Skip})
	}
	cmd = append(cmd,
		bson.E{Key: "limit", Value: q.Limit},
		// The whole page in the first batch: the limit closes the cursor with it, unless the
		// documents overflow one reply, which the cursor id then tells.
		bson.E{Key: "batchSize", Value: q.Limit},
		// The services read majority-committed data (ClientOptions); RunCommand takes no
		// read concern from the client, so the command says it.
		bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: "majority"}}},
	)
	var reply struct {
		Cursor struct {
			FirstBatch bson.RawValue `bson:"firstBatch"`
			ID         int64         `bson:"id"`
		} `bson:"cursor"`
	}
	if err := coll.Database().RunCommand(ctx, cmd).Decode(&reply); err != nil {
		return nil, fmt.Errorf("find %s: %w", coll.Name(), err)
	}
	batch, ok := reply.Cursor.FirstBatch.ArrayOK()
	if !ok {
		return nil, fmt.Errorf("find %s: the reply holds no first batch", coll.Name())
	}
	docs, err := batch.Values()
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", coll.Name(), err)
	}
	if reply.Cursor.ID != 0 {
		// MongoDB closes the cursor once the limit is met; a server that keeps it open for
		// nothing gets it closed. Short of the limit, the documents overflowed one reply.
		_ = coll.Database().RunCommand(context.WithoutCancel(ctx), bson.D{
			{Key: "killCursors", Value: coll.Name()}, {Key: "cursors", Value: bson.A{reply.Cursor.ID}},
		}).Err()
		if int64(len(docs)) < q.Limit {
			return nil, fmt.Errorf("find %s: %w", coll.Name(), ErrPageTooLarge)
		}
	}
	out := make([]T, len(docs))
	for i, d := range docs {
		if err := bson.Unmarshal(d.Document(), &out[i]); err != nil {
			return nil, fmt.Errorf("find %s: decode: %w", coll.Name(), err)
		}
	}
	return out, nil
}

// Count counts the documents of coll matching filter, within the search bound.
func Count(ctx context.Context, coll *mongo.Collection, filter any) (int64, error) {
	ctx, cancel := searchContext(ctx)
	defer cancel()
	n, err := coll.CountDocuments(ctx, filter)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", coll.Name(), err)
	}
	return n, nil
}

// searchContext is ctx with a deadline no later than SearchTimeout from now.
func searchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= SearchTimeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, SearchTimeout)
}

// Sorted sorts by field in one direction, ties broken by _id in the same direction, so that
// pages never overlap or skip a document.
func Sorted(field string, desc bool) bson.D {
	dir := 1
	if desc {
		dir = -1
	}
	sort := bson.D{{Key: field, Value: dir}}
	if field != "_id" {
		sort = append(sort, bson.E{Key: "_id", Value: dir})
	}
	return sort
}

// Search reads one page of q and the number of every match of its filter: the reads of a list
// endpoint, each within the search bound. A page that holds some matches but fewer than its
// limit is the last one, and an empty first page means none: then the total is known without
// counting.
func Search[T any](ctx context.Context, coll *mongo.Collection, q Query) ([]T, int64, error) {
	items, err := FindPage[T](ctx, coll, q)
	if err != nil {
		return nil, 0, err
	}
	switch n := int64(len(items)); {
	case n > 0 && n < q.Limit:
		return items, q.Skip + n, nil
	case n == 0 && q.Skip == 0:
		return items, 0, nil
	}
	total, err := Count(ctx, coll, q.filter())
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}
