// Package store keeps the events service's data in MongoDB: the inbox the relays append to,
// the log with each company's positions, and the sequencers that hand those positions out,
// one writer per company under a lease.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	pevents "github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/events"
)

const (
	colInbox      = "inbox"
	colLog        = "log"
	colSequencers = "sequencers"
	colRejected   = "rejected"
	// SequenceBatch is how many inbox events one sequencing pass takes at most.
	SequenceBatch = 500
)

// Store reads and writes the events collections.
type Store struct {
	db                     *mongo.Database
	inbox, log, sequencers *mongo.Collection
	// owner names this process in the sequencer leases; lease is how long one lasts.
	owner string
	lease time.Duration
	now   func() time.Time
}

// New returns a store on db; owner names this process in the leases it takes for lease.
func New(db *mongo.Database, owner string, lease time.Duration, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, inbox: db.Collection(colInbox), log: db.Collection(colLog), sequencers: db.Collection(colSequencers),
		owner: owner, lease: lease, now: now}
}

// Indexes are the indexes the queries rely on.
func Indexes() []mongodb.Index {
	indexes := append(pevents.LogIndexes(colLog),
		// The sequencer's pass: the oldest arrivals first.
		mongodb.Index{Collection: colInbox, Name: "arrived_ord_id", Keys: mongodb.Keys("arrived", "ord", "_id")},
		// The sequencer's check that an entity's previous version is not still waiting.
		mongodb.Index{Collection: colInbox, Name: "entity_version", Keys: mongodb.Keys("entity.type", "entity.id", "entity.version")},
		// One event per position of a company: a second writer's insert is refused.
		mongodb.Index{Collection: colLog, Name: "company_seq", Keys: mongodb.Keys("companyId", "seq"), Unique: true},
		// Reading a company's events of some types in order (the search's type filter).
		mongodb.Index{Collection: colLog, Name: "company_type_seq", Keys: mongodb.Keys("companyId", "type", "seq")},
		// Reading one entity's events of a company in order.
		mongodb.Index{Collection: colLog, Name: "company_entity_seq", Keys: mongodb.Keys("companyId", "entity.type", "entity.id", "seq")},
		// Retention: a company's events logged before a time.
		// (Named anew when seq joined it: an index keeps its name's keys. A "company_logged"
		// index an earlier release made is no longer used and may be dropped.)
		mongodb.Index{Collection: colLog, Name: "company_logged_seq", Keys: mongodb.Keys("companyId", "logged", "seq")},
	)
	return append(append(indexes, SubscriptionIndexes()...), DeliveryIndexes()...)
}

// EnsureIndexes creates the Indexes.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, s.db, Indexes())
}

// Append keeps events in the inbox, idempotently by id, and returns how many were new. An
// event already sequenced may enter the inbox again; the sequencer recognises and drops it.
func (s *Store) Append(ctx context.Context, evs []pevents.Event) (int, error) {
	accepted := 0
	arrived := s.now().UTC()
	for i, e := range evs {
		// ord keeps the call's order among the events of one arrival time (milliseconds).
		doc := append(bson.D{{Key: "_id", Value: e.ID}, {Key: "arrived", Value: arrived}, {Key: "ord", Value: i}}, e.Document()...)
		_, err := s.inbox.InsertOne(ctx, doc)
		switch {
		case mongo.IsDuplicateKeyError(err):
		case err != nil:
			return accepted, fmt.Errorf("events: append %s: %w", e.ID, err)
		default:
			accepted++
		}
	}
	return accepted, nil
}

// Logged is an event at its position in its company's log.
type Logged struct {
	pevents.Event
	Seq int64
}

// sequencerDoc is one company's sequencer: the lease and the positions.
type sequencerDoc struct {
	ID    string    `bson:"_id"`
	Owner string    `bson:"owner"`
	Until time.Time `bson:"until"`
	// Next is the position the next event takes; the positions below it are committed (the
	// readers' watermark).
	Next int64 `bson:"next"`
	// Floor is the oldest position kept; retention moves it up.
	Floor int64 `bson:"floor"`
}

// Sequence gives the oldest inbox events their positions in their companies' logs, for the
// companies whose lease this process holds or can take, and returns how many it placed.
func (s *Store) Sequence(ctx context.Context) (int, error) {
	cur, err := s.inbox.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "arrived", Value: 1}, {Key: "ord", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(SequenceBatch))
	if err != nil {
		return 0, fmt.Errorf("events: read the inbox: %w", err)
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		return 0, fmt.Errorf("events: read the inbox: %w", err)
	}
	byCompany := map[string][]pevents.Event{}
	var order []string
	for _, raw := range raws {
		e, err := pevents.Decode(raw)
		if err != nil {
			// One unreadable document must not stop every company's log: set it aside.
			if aerr := s.setAside(ctx, raw, err.Error()); aerr != nil {
				return 0, aerr
			}
			continue
		}
		if _, seen := byCompany[e.CompanyID]; !seen {
			order = append(order, e.CompanyID)
		}
		byCompany[e.CompanyID] = append(byCompany[e.CompanyID], e)
	}
	placed := 0
	var errs []error
	for _, company := range order {
		n, err := s.sequenceCompany(ctx, company, byCompany[company], len(raws) == SequenceBatch)
		placed += n
		errs = append(errs, err)
	}
	return placed, errors.Join(errs...)
}

// sequenceCompany places one company's batch under its lease: each event at the next
// position, the watermark moved past them, and only then the inbox emptied of them. A crash
// between the steps repeats them: an event already placed is recognised by its id.
func (s *Store) sequenceCompany(ctx context.Context, company string, batch []pevents.Event, more bool) (int, error) {
	next, ok, err := s.takeLease(ctx, company)
	if err != nil || !ok {
		return 0, err
	}
	done := make([]string, 0, len(batch))
	placed := 0
	logged := s.now().UTC()
	var failure error
	inBatch := map[pevents.Entity]bool{}
	for _, e := range batch {
		inBatch[e.Entity] = true
	}
	// Only a pass that did not take the whole inbox can lack a predecessor that waits there
	// (an outbox appends an entity's versions in order).
	var waiting map[pevents.Entity]bool
	if more {
		if waiting, err = s.waitingPredecessors(ctx, batch, inBatch); err != nil {
			return 0, err
		}
	}
	held := map[pevents.Entity]bool{} // entities (version 0) whose next version waits
	for _, e := range events.Arrange(batch) {
		entity := pevents.Entity{Type: e.Entity.Type, ID: e.Entity.ID}
		if held[entity] {
			continue
		}
		if waiting[pevents.Entity{Type: e.Entity.Type, ID: e.Entity.ID, Version: e.Entity.Version - 1}] {
			// Its previous version arrived later (another replica's clock) and is still in
			// the inbox beyond this batch: this one waits for it, so the log keeps each
			// entity in version order.
			held[entity] = true
			continue
		}
		doc := append(bson.D{{Key: "_id", Value: e.ID}, {Key: "seq", Value: next}, {Key: "logged", Value: logged}}, e.Document()...)
		if _, err = s.log.InsertOne(ctx, doc); err == nil {
			next++
			placed++
			done = append(done, e.ID)
			continue
		}
		if !mongo.IsDuplicateKeyError(err) {
			failure = fmt.Errorf("events: log %s: %w", e.ID, err)
			break
		}
		again, err := s.classify(ctx, company, next, e)
		if err != nil {
			failure = err
			break
		}
		if again == lostLease {
			// Another writer placed an event here: it holds the company now.
			break
		}
		done = append(done, e.ID)
	}
	if len(done) > 0 {
		// The watermark first: readers see the new positions only once all below are in.
		_, err := s.sequencers.UpdateOne(ctx, bson.D{{Key: "_id", Value: company}, {Key: "owner", Value: s.owner}, {Key: "next", Value: bson.D{{Key: "$lt", Value: next}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "next", Value: next}}}})
		if err != nil {
			return placed, errors.Join(failure, fmt.Errorf("events: move the watermark of %s: %w", company, err))
		}
		if _, err := s.inbox.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: done}}}}); err != nil {
			return placed, errors.Join(failure, fmt.Errorf("events: clear the inbox of %s: %w", company, err))
		}
	}
	return placed, failure
}

// waitingPredecessors returns, of the previous versions of batch's events that are not in
// the batch, those still in the inbox, in one query. An outbox relays an entity's versions in
// order, so such a previous version is in the log already, or in the inbox, or set aside;
// only in the inbox is it worth waiting for.
func (s *Store) waitingPredecessors(ctx context.Context, batch []pevents.Event, inBatch map[pevents.Entity]bool) (map[pevents.Entity]bool, error) {
	var anyOf bson.A
	for _, e := range batch {
		prev := pevents.Entity{Type: e.Entity.Type, ID: e.Entity.ID, Version: e.Entity.Version - 1}
		if prev.Version >= 1 && !inBatch[prev] {
			anyOf = append(anyOf, bson.D{{Key: "entity.type", Value: prev.Type}, {Key: "entity.id", Value: prev.ID}, {Key: "entity.version", Value: prev.Version}})
		}
	}
	if len(anyOf) == 0 {
		return nil, nil
	}
	// At most one clause per event of the batch (SequenceBatch), each an exact key of the
	// entity_version index.
	cur, err := s.inbox.Find(ctx, bson.D{{Key: "$or", Value: anyOf}}, options.Find().SetProjection(bson.D{{Key: "entity", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("events: look for earlier versions in the inbox: %w", err)
	}
	var found []struct {
		Entity pevents.Entity `bson:"entity"`
	}
	if err := cur.All(ctx, &found); err != nil {
		return nil, fmt.Errorf("events: look for earlier versions in the inbox: %w", err)
	}
	out := make(map[pevents.Entity]bool, len(found))
	for _, f := range found {
		out[f.Entity] = true
	}
	return out, nil
}

// setAside moves an inbox document that can never be placed to the rejected collection,
// with the reason, for an operator.
func (s *Store) setAside(ctx context.Context, raw bson.Raw, reason string) error {
	id := raw.Lookup("_id")
	doc := bson.D{{Key: "_id", Value: id}, {Key: "reason", Value: reason}, {Key: "at", Value: s.now().UTC()}, {Key: "document", Value: raw}}
	if _, err := s.db.Collection(colRejected).InsertOne(ctx, doc); err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("events: set aside an unreadable inbox document: %w", err)
	}
	if _, err := s.inbox.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return fmt.Errorf("events: remove an unreadable inbox document: %w", err)
	}
	return nil
}

type outcome int

const (
	repeat outcome = iota
	lostLease
	rejected
)

// classify tells why placing e at next hit a unique index: e is placed already (a repeat),
// another writer holds the position (the lease was lost), or e claims a version of its
// entity that another event holds; that one can never be placed, so it is set aside in the
// rejected collection with the reason, for an operator, instead of blocking the company.
func (s *Store) classify(ctx context.Context, company string, next int64, e pevents.Event) (outcome, error) {
	if n, err := s.log.CountDocuments(ctx, bson.D{{Key: "_id", Value: e.ID}}); err != nil || n > 0 {
		return repeat, err
	}
	if n, err := s.log.CountDocuments(ctx, bson.D{{Key: "companyId", Value: company}, {Key: "seq", Value: next}}); err != nil || n > 0 {
		return lostLease, err
	}
	reason := fmt.Sprintf("%s %s version %d is another event's", e.Entity.Type, e.Entity.ID, e.Entity.Version)
	doc := append(bson.D{{Key: "_id", Value: e.ID}, {Key: "reason", Value: reason}, {Key: "at", Value: s.now().UTC()}}, e.Document()...)
	if _, err := s.db.Collection(colRejected).InsertOne(ctx, doc); err != nil && !mongo.IsDuplicateKeyError(err) {
		return rejected, fmt.Errorf("events: set aside %s: %w", e.ID, err)
	}
	return rejected, nil
}

// takeLease takes or renews company's sequencer lease and returns the next position; ok is
// false while another process holds it. On taking it over, the next position is the higher
// of the watermark and the log's last position + 1, so a writer that died between placing
// events and moving the watermark leaves neither a gap nor a repeat.
func (s *Store) takeLease(ctx context.Context, company string) (int64, bool, error) {
	now := s.now().UTC()
	filter := bson.D{{Key: "_id", Value: company}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "owner", Value: s.owner}}, bson.D{{Key: "until", Value: bson.D{{Key: "$lt", Value: now}}}}}}}
	var doc sequencerDoc
	err := s.sequencers.FindOneAndUpdate(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "owner", Value: s.owner}, {Key: "until", Value: now.Add(s.lease)}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		doc = sequencerDoc{ID: company, Owner: s.owner, Until: now.Add(s.lease), Next: 1, Floor: 1}
		_, err = s.sequencers.InsertOne(ctx, doc)
		if mongo.IsDuplicateKeyError(err) {
			return 0, false, nil // held by another process, or just taken
		}
	}
	if err != nil {
		return 0, false, fmt.Errorf("events: lease of %s: %w", company, err)
	}
	var last struct {
		Seq int64 `bson:"seq"`
	}
	err = s.log.FindOne(ctx, bson.D{{Key: "companyId", Value: company}}, options.FindOne().SetSort(bson.D{{Key: "companyId", Value: 1}, {Key: "seq", Value: -1}}).
		SetProjection(bson.D{{Key: "seq", Value: 1}})).Decode(&last)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return 0, false, fmt.Errorf("events: last position of %s: %w", company, err)
	}
	return max(doc.Next, last.Seq+1), true, nil
}

// Head is what a reader needs of a company's log: the oldest position kept and the
// watermark (every position below Next is committed).
type Head struct{ Floor, Next int64 }

// Head returns company's head; a company with no events has Floor 1 and Next 1.
func (s *Store) Head(ctx context.Context, company string) (Head, error) {
	var doc sequencerDoc
	err := s.sequencers.FindOne(ctx, bson.D{{Key: "_id", Value: company}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Head{Floor: 1, Next: 1}, nil
	}
	if err != nil {
		return Head{}, fmt.Errorf("events: head of %s: %w", company, err)
	}
	return Head{Floor: max(doc.Floor, 1), Next: max(doc.Next, 1)}, nil
}

// Query selects a company's events after a position.
type Query struct {
	CompanyID string
	// After is the last position already seen; Below is the watermark (Head.Next): nothing at
	// or above it is read, as it may not be committed in order yet.
	After, Below         int64
	Types                []string
	EntityType, EntityID string
	Limit                int
}

// Read returns up to q.Limit events of q in position order, and whether more follow.
func (s *Store) Read(ctx context.Context, q Query) ([]Logged, bool, error) {
	filter := bson.D{{Key: "companyId", Value: q.CompanyID}}
	if q.EntityType != "" {
		filter = append(filter, bson.E{Key: "entity.type", Value: q.EntityType})
		if q.EntityID != "" {
			filter = append(filter, bson.E{Key: "entity.id", Value: q.EntityID})
		}
	}
	filter = append(filter, bson.E{Key: "seq", Value: bson.D{{Key: "$gt", Value: q.After}, {Key: "$lt", Value: q.Below}}})
	if len(q.Types) > 0 {
		filter = append(filter, bson.E{Key: "type", Value: bson.D{{Key: "$in", Value: q.Types}}})
	}
	cur, err := s.log.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}).SetLimit(int64(q.Limit)+1))
	if err != nil {
		return nil, false, fmt.Errorf("events: read: %w", err)
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		return nil, false, fmt.Errorf("events: read: %w", err)
	}
	more := len(raws) > q.Limit
	if more {
		raws = raws[:q.Limit]
	}
	out := make([]Logged, len(raws))
	for i, raw := range raws {
		e, err := pevents.Decode(raw)
		if err != nil {
			return nil, false, err
		}
		out[i] = Logged{Event: e, Seq: raw.Lookup("seq").AsInt64()}
	}
	return out, more, nil
}

// Prune deletes company's events logged before cutoff: the floor moves up first, so that a
// reader at a deleted position is told its token is too old rather than skipping events.
func (s *Store) Prune(ctx context.Context, company string, cutoff time.Time) (int64, error) {
	var last struct {
		Seq int64 `bson:"seq"`
	}
	err := s.log.FindOne(ctx, bson.D{{Key: "companyId", Value: company}, {Key: "logged", Value: bson.D{{Key: "$lt", Value: cutoff}}}},
		// The events of one sequencer pass share their logged time: the highest position of
		// the latest time is the last one to go.
		options.FindOne().SetSort(bson.D{{Key: "companyId", Value: 1}, {Key: "logged", Value: -1}, {Key: "seq", Value: -1}}).SetProjection(bson.D{{Key: "seq", Value: 1}})).Decode(&last)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("events: prune %s: %w", company, err)
	}
	if _, err := s.sequencers.UpdateOne(ctx, bson.D{{Key: "_id", Value: company}, {Key: "floor", Value: bson.D{{Key: "$lte", Value: last.Seq}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "floor", Value: last.Seq + 1}}}}); err != nil {
		return 0, fmt.Errorf("events: prune %s: %w", company, err)
	}
	res, err := s.log.DeleteMany(ctx, bson.D{{Key: "companyId", Value: company}, {Key: "seq", Value: bson.D{{Key: "$lte", Value: last.Seq}}}})
	if err != nil {
		return 0, fmt.Errorf("events: prune %s: %w", company, err)
	}
	return res.DeletedCount, nil
}

// Companies returns the companies that have a log, for the retention pass.
func (s *Store) Companies(ctx context.Context) ([]string, error) {
	cur, err := s.sequencers.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("events: companies: %w", err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("events: companies: %w", err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out, nil
}
