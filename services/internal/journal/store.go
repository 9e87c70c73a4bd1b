package journal

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Op is one database call of the journal, as a Config.Step hook sees it.
type Op struct {
	// Command is the driver method (InsertOne, UpdateOne, Find…), Collection its collection.
	Command, Collection string
	// Write is true for a call that changes documents.
	Write bool
	// After is true when the hook is called once a write has returned without error.
	After bool
}

// coll is a collection whose every call passes through the journal's Step hook first (and,
// for writes, after): the seeded checker stops runners, loses answers and interleaves
// runners there. Without a hook it is the collection itself.
type coll struct {
	*mongo.Collection
	step func(context.Context, Op) error
}

func (j *Journal) collection(name string) coll {
	return coll{Collection: j.cfg.DB.Collection(name), step: j.cfg.Step}
}

func (c coll) before(ctx context.Context, command string, write bool) error {
	if c.step == nil {
		return nil
	}
	return c.step(ctx, Op{Command: command, Collection: c.Name(), Write: write})
}

// after passes a write's answer through the hook: an error it returns replaces the answer.
func (c coll) after(ctx context.Context, command string, err error) error {
	if c.step == nil || err != nil {
		return err
	}
	return c.step(ctx, Op{Command: command, Collection: c.Name(), Write: true, After: true})
}

func (c coll) InsertOne(ctx context.Context, doc any, opts ...options.Lister[options.InsertOneOptions]) (*mongo.InsertOneResult, error) {
	if err := c.before(ctx, "InsertOne", true); err != nil {
		return nil, err
	}
	res, err := c.Collection.InsertOne(ctx, doc, opts...)
	return res, c.after(ctx, "InsertOne", err)
}

func (c coll) InsertMany(ctx context.Context, docs []any, opts ...options.Lister[options.InsertManyOptions]) (*mongo.InsertManyResult, error) {
	if err := c.before(ctx, "InsertMany", true); err != nil {
		return nil, err
	}
	res, err := c.Collection.InsertMany(ctx, docs, opts...)
	return res, c.after(ctx, "InsertMany", err)
}

func (c coll) UpdateOne(ctx context.Context, filter, update any, opts ...options.Lister[options.UpdateOneOptions]) (*mongo.UpdateResult, error) {
	if err := c.before(ctx, "UpdateOne", true); err != nil {
		return nil, err
	}
	res, err := c.Collection.UpdateOne(ctx, filter, update, opts...)
	return res, c.after(ctx, "UpdateOne", err)
}

func (c coll) DeleteOne(ctx context.Context, filter any, opts ...options.Lister[options.DeleteOneOptions]) (*mongo.DeleteResult, error) {
	if err := c.before(ctx, "DeleteOne", true); err != nil {
		return nil, err
	}
	res, err := c.Collection.DeleteOne(ctx, filter, opts...)
	return res, c.after(ctx, "DeleteOne", err)
}

func (c coll) Find(ctx context.Context, filter any, opts ...options.Lister[options.FindOptions]) (*mongo.Cursor, error) {
	if err := c.before(ctx, "Find", false); err != nil {
		return nil, err
	}
	return c.Collection.Find(ctx, filter, opts...)
}

// FindOne answers the hook's error as the result's error.
func (c coll) FindOne(ctx context.Context, filter any, opts ...options.Lister[options.FindOneOptions]) *mongo.SingleResult {
	if err := c.before(ctx, "FindOne", false); err != nil {
		return mongo.NewSingleResultFromDocument(bson.D{}, err, nil)
	}
	return c.Collection.FindOne(ctx, filter, opts...)
}
