package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/servicedesk"
)

const colRequests = "requests"

type versionDoc struct {
	Number      int32     `bson:"number"`
	Action      int32     `bson:"action"`
	Role        string    `bson:"role"`
	Actor       string    `bson:"actor"`
	CompanyName string    `bson:"companyName"`
	Status      string    `bson:"status"`
	At          time.Time `bson:"at"`
	Reason      string    `bson:"reason,omitempty"`
	Signature   string    `bson:"signature,omitempty"`
	Roles       []string  `bson:"roles,omitempty"`
	PrevHash    string    `bson:"prevHash"`
	Hash        string    `bson:"hash"`
}

type requestDoc struct {
	ID            string       `bson:"_id"`
	CompanyID     string       `bson:"companyId"`
	CompanyName   string       `bson:"companyName"`
	ServiceID     string       `bson:"serviceId"`
	Product       string       `bson:"product"`
	ProductID     string       `bson:"productId"`
	RequestType   string       `bson:"requestType"`
	Owner         string       `bson:"owner"`
	NeedsChecker  bool         `bson:"needsChecker"`
	EndToEndID    string       `bson:"endToEndId"`
	Payload       string       `bson:"payload"`
	BodyHash      string       `bson:"bodyHash"`
	EntityIDs     []string     `bson:"entityIds"`
	PluginDetails string       `bson:"pluginDetails"`
	Status        string       `bson:"status"`
	CreatedBy     string       `bson:"createdBy"`
	UpdatedBy     string       `bson:"updatedBy"`
	CreatedAt     time.Time    `bson:"createdAt"`
	UpdatedAt     time.Time    `bson:"updatedAt"`
	ExpiresAt     time.Time    `bson:"expiresAt"`
	AuthorisedAt  time.Time    `bson:"authorisedAt"`
	FailureReason string       `bson:"failureReason"`
	SearchText    string       `bson:"searchText"`
	Version       int32        `bson:"version"`
	Versions      []versionDoc `bson:"versions"`
	// PolicyVersion and Rule are the policy that decided the request (absent on requests
	// made before policies).
	PolicyVersion int64    `bson:"policyVersion,omitempty"`
	Rule          *ruleDoc `bson:"rule,omitempty"`
	// USD is the request's value in US dollars when it was created (absent without one).
	USD string `bson:"usd,omitempty"`
}

// InsertRequest stores a new request with its service_request.created event in its outbox;
// apperr.ErrExists when the company already used its endToEndId (the unique index decides
// between racing creates, and the loser records no event).
func (s *Store) InsertRequest(ctx context.Context, r servicedesk.Request) error {
	created, err := requestEvent(ctx, r, "")
	if err != nil {
		return err
	}
	doc, err := outbox.NewDocument(toDoc(r), r.CreatedAt, created)
	if err != nil {
		return fmt.Errorf("request %s: %w", r.ID, err)
	}
	_, err = s.db.Collection(colRequests).InsertOne(ctx, doc)
	if mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("request %s: %w", r.EndToEndID, apperr.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("insert request %s: %w", r.ID, err)
	}
	return nil
}

// Request returns a request of the company, or apperr.ErrNotFound (also for another
// company's request).
func (s *Store) Request(ctx context.Context, companyID, id string) (servicedesk.Request, error) {
	return s.findOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: companyID}})
}

// RequestByIDAnyCompany returns a request whatever its company (internal checks only).
func (s *Store) RequestByIDAnyCompany(ctx context.Context, id string) (servicedesk.Request, error) {
	return s.findOne(ctx, bson.D{{Key: "_id", Value: id}})
}

// RequestByEndToEnd returns the company's request with endToEndID, or apperr.ErrNotFound.
func (s *Store) RequestByEndToEnd(ctx context.Context, companyID, endToEndID string) (servicedesk.Request, error) {
	return s.findOne(ctx, bson.D{{Key: "companyId", Value: companyID}, {Key: "endToEndId", Value: endToEndID}})
}

// RequestsByID returns the company's requests among ids (one query).
func (s *Store) RequestsByID(ctx context.Context, companyID string, ids []string) ([]servicedesk.Request, error) {
	filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "companyId", Value: companyID}}
	return s.findMany(ctx, filter, options.Find())
}

func (s *Store) findOne(ctx context.Context, filter bson.D) (servicedesk.Request, error) {
	var doc requestDoc
	err := s.db.Collection(colRequests).FindOne(ctx, filter).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return servicedesk.Request{}, fmt.Errorf("request: %w", apperr.ErrNotFound)
	}
	if err != nil {
		return servicedesk.Request{}, fmt.Errorf("find request: %w", err)
	}
	return fromDoc(doc), nil
}

func (s *Store) findMany(ctx context.Context, filter any, opts *options.FindOptionsBuilder) ([]servicedesk.Request, error) {
	cur, err := s.db.Collection(colRequests).Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("find requests: %w", err)
	}
	var docs []requestDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	out := make([]servicedesk.Request, 0, len(docs))
	for _, d := range docs {
		out = append(out, fromDoc(d))
	}
	return out, nil
}

// Apply performs transition t on request r in one conditional update: it matches only while
// the stored request still has r's version and one of t's source statuses, so of racing
// actions exactly one wins; the others get apperr.ErrConflict. The same update stages the
// event of the status the request enters in its outbox, so a loser records none. It returns
// the updated request.
func (s *Store) Apply(ctx context.Context, r servicedesk.Request, t servicedesk.Transition, at time.Time) (servicedesk.Request, error) {
	if !t.Allowed(r.Status) {
		return r, fmt.Errorf("request %s is %s: %w", r.ID, r.Status, apperr.ErrConflict)
	}
	version := int32(len(r.Versions))
	// The event sequence of the stored request at r's version: the update's guard on that
	// version also guards the sequence (every event moves the version).
	seq, err := s.eventSeq(ctx, r.ID, version)
	if err != nil {
		return r, err
	}
	var prev *servicedesk.Version
	if n := len(r.Versions); n > 0 {
		prev = &r.Versions[n-1]
	}
	v := servicedesk.Seal(r.ID, r.BodyHash, servicedesk.Version{Number: version + 1, Action: t.Action, Role: t.Role,
		Actor: t.Actor, CompanyName: r.CompanyName, Status: t.To, At: at.UTC(), Reason: t.Reason, Signature: t.Signature, Roles: t.Roles}, prev)
	set := bson.D{{Key: "status", Value: t.To}, {Key: "updatedAt", Value: v.At}, {Key: "version", Value: v.Number}}
	after := r
	after.Status, after.UpdatedAt, after.Versions = t.To, v.At, append(slices.Clip(r.Versions), v)
	if t.Updated != "" {
		set = append(set, bson.E{Key: "updatedBy", Value: t.Updated})
		after.UpdatedBy = t.Updated
	}
	if t.To == servicedesk.StatusAuthorised {
		set = append(set, bson.E{Key: "authorisedAt", Value: v.At})
	}
	if t.Reason != "" {
		set = append(set, bson.E{Key: "failureReason", Value: t.Reason})
	}
	draft, err := requestEvent(ctx, after, r.Status)
	if err != nil {
		return r, err
	}
	eventSet, eventPush, _, err := outbox.Stage(seq, v.At, draft)
	if err != nil {
		return r, fmt.Errorf("request %s: %w", r.ID, err)
	}
	filter := bson.D{{Key: "_id", Value: r.ID}, {Key: "version", Value: version}, {Key: "status", Value: bson.D{{Key: "$in", Value: t.From}}}}
	update := bson.D{{Key: "$set", Value: append(set, eventSet...)},
		{Key: "$push", Value: append(bson.D{{Key: "versions", Value: toVersionDoc(v)}}, eventPush...)}}
	var doc requestDoc
	err = s.db.Collection(colRequests).FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return r, fmt.Errorf("request %s changed concurrently: %w", r.ID, apperr.ErrConflict)
	}
	if err != nil {
		return r, fmt.Errorf("update request %s: %w", r.ID, err)
	}
	return fromDoc(doc), nil
}

// eventSeq reads the event sequence of request id, which must still be at version (zero
// for a request stored before it had events); apperr.ErrConflict when it moved on or is gone.
func (s *Store) eventSeq(ctx context.Context, id string, version int32) (int64, error) {
	var doc struct {
		Version  int32 `bson:"version"`
		EventSeq int64 `bson:"eventSeq"`
	}
	err := s.db.Collection(colRequests).FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: "version", Value: 1}, {Key: outbox.FieldSeq, Value: 1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, fmt.Errorf("request %s changed concurrently: %w", id, apperr.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("find request %s: %w", id, err)
	}
	if doc.Version != version {
		return 0, fmt.Errorf("request %s changed concurrently: %w", id, apperr.ErrConflict)
	}
	return doc.EventSeq, nil
}

// RecordFailedAttempt counts one more failed execution of request id and returns the count.
func (s *Store) RecordFailedAttempt(ctx context.Context, id string) (int32, error) {
	var doc struct {
		Attempts int32 `bson:"executionAttempts"`
	}
	err := s.db.Collection(colRequests).FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "executionAttempts", Value: 1}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if err != nil {
		return 0, fmt.Errorf("count attempt of %s: %w", id, err)
	}
	return doc.Attempts, nil
}

// Due returns up to limit requests in one of statuses whose time field is before cutoff
// (the sweeper's work: expired pending requests, authorised requests left unexecuted).
func (s *Store) Due(ctx context.Context, statuses []string, field string, cutoff time.Time, limit int64) ([]servicedesk.Request, error) {
	filter := bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: statuses}}}, {Key: field, Value: bson.D{{Key: "$lt", Value: cutoff}}}}
	return s.findMany(ctx, filter, options.Find().SetLimit(limit).SetSort(bson.D{{Key: field, Value: 1}}))
}
