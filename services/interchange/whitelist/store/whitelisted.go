package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/outbox"
)

type whitelistedDoc struct {
	ID              string    `bson:"_id"`
	CompanyID       string    `bson:"companyId"`
	Address         string    `bson:"address"`
	Blockchain      string    `bson:"blockchain"`
	BlockchainID    string    `bson:"blockchainId"`
	Purposes        []string  `bson:"addressPurpose"`
	BeneficiaryID   string    `bson:"beneficiaryId"`
	BeneficiaryName string    `bson:"beneficiaryName"`
	Notes           string    `bson:"notes"`
	Hosted          bool      `bson:"hostedAddress"`
	VaspID          string    `bson:"vaspId"`
	VaspName        string    `bson:"vaspName"`
	Status          string    `bson:"status"`
	ActiveKey       string    `bson:"activeKey"`
	CreatedBy       string    `bson:"createdBy"`
	CreatedAt       time.Time `bson:"createdAt"`
	UpdatedAt       time.Time `bson:"updatedAt"`
	Version         int64     `bson:"version"`
	RequestID       string    `bson:"requestId"`
	DeactivatedBy   string    `bson:"deactivatedBy"`
	// EventSeq is the event sequence (outbox.FieldSeq; absent before the first event).
	EventSeq int64 `bson:"eventSeq,omitempty"`
}

// inactiveKey is activeKey of an address that is no longer ACTIVE: unique, and never equal
// to an ACTIVE key.
func inactiveKey(id string) string { return "inactive:" + id }

func toWhitelistedDoc(w address.Whitelisted) whitelistedDoc {
	key := w.Key()
	if w.Status != address.StatusActive {
		key = inactiveKey(w.ID)
	}
	return whitelistedDoc{ID: w.ID, CompanyID: w.CompanyID, Address: w.Address, Blockchain: w.Blockchain,
		BlockchainID: address.BlockchainID(w.Blockchain), Purposes: w.Purposes, BeneficiaryID: w.BeneficiaryID,
		BeneficiaryName: w.BeneficiaryName, Notes: w.Notes, Hosted: w.Hosted, VaspID: w.VaspID, VaspName: w.VaspName,
		Status: w.Status, ActiveKey: key, CreatedBy: w.CreatedBy, CreatedAt: w.CreatedAt.UTC().Truncate(time.Millisecond),
		UpdatedAt: w.UpdatedAt.UTC().Truncate(time.Millisecond), Version: w.Version, RequestID: w.RequestID, DeactivatedBy: w.DeactivatedBy,
		EventSeq: w.EventSeq}
}

func (d whitelistedDoc) whitelisted() address.Whitelisted {
	return address.Whitelisted{ID: d.ID, CompanyID: d.CompanyID, Address: d.Address, Blockchain: d.Blockchain, Purposes: d.Purposes,
		BeneficiaryID: d.BeneficiaryID, BeneficiaryName: d.BeneficiaryName, Notes: d.Notes, Hosted: d.Hosted, VaspID: d.VaspID,
		VaspName: d.VaspName, Status: d.Status, CreatedBy: d.CreatedBy, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
		Version: d.Version, RequestID: d.RequestID, DeactivatedBy: d.DeactivatedBy, EventSeq: d.EventSeq}
}

// InsertWhitelisted inserts w under its reserved id, with its event (whitelisted_address.created)
// staged in the document, and returns the stored address. If the id is taken it returns the
// address already stored (a repeated execution: the caller checks its RequestID); if the
// company already holds the address ACTIVE on the blockchain it returns apperr.ErrExists.
// An address it did not insert staged nothing.
func (s *Store) InsertWhitelisted(ctx context.Context, w address.Whitelisted) (address.Whitelisted, error) {
	col := s.db.Collection(colWhitelisted)
	set, _, staged, err := outbox.Stage(0, s.stamp(), whitelistedDraft(ctx, EventWhitelistedCreated, w, ""))
	if err != nil {
		return address.Whitelisted{}, fmt.Errorf("insert whitelisted address %s: %w", w.ID, err)
	}
	doc, err := outbox.Attach(toWhitelistedDoc(w), set, staged)
	if err != nil {
		return address.Whitelisted{}, fmt.Errorf("insert whitelisted address %s: %w", w.ID, err)
	}
	_, err = col.InsertOne(ctx, doc)
	if err == nil {
		w.EventSeq = staged[len(staged)-1].Entity.Version
		return w, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return address.Whitelisted{}, fmt.Errorf("insert whitelisted address %s: %w", w.ID, err)
	}
	var stored whitelistedDoc
	err = col.FindOne(ctx, bson.D{{Key: "_id", Value: w.ID}}).Decode(&stored)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return address.Whitelisted{}, fmt.Errorf("whitelist %s %s: %w", w.Blockchain, w.Address, apperr.ErrExists)
	}
	if err != nil {
		return address.Whitelisted{}, fmt.Errorf("read whitelisted address %s: %w", w.ID, err)
	}
	return stored.whitelisted(), nil
}

// Whitelisted returns the company's whitelisted address id, or apperr.ErrNotFound (also when
// it belongs to another company).
func (s *Store) Whitelisted(ctx context.Context, companyID, id string) (address.Whitelisted, error) {
	return s.findWhitelisted(ctx, bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: companyID}})
}

// ActiveWhitelisted returns the company's ACTIVE address on blockchain (compared in its
// normalised form), or apperr.ErrNotFound.
func (s *Store) ActiveWhitelisted(ctx context.Context, companyID, blockchain, addr string) (address.Whitelisted, error) {
	return s.findWhitelisted(ctx, bson.D{{Key: "activeKey", Value: address.ActiveKey(companyID, blockchain, addr)}})
}

func (s *Store) findWhitelisted(ctx context.Context, filter bson.D) (address.Whitelisted, error) {
	var doc whitelistedDoc
	err := s.db.Collection(colWhitelisted).FindOne(ctx, filter).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return address.Whitelisted{}, fmt.Errorf("whitelisted address: %w", apperr.ErrNotFound)
	}
	if err != nil {
		return address.Whitelisted{}, fmt.Errorf("find whitelisted address: %w", err)
	}
	return doc.whitelisted(), nil
}

// DeactivateWhitelisted deactivates w in one conditional update guarded by its status
// (ACTIVE) and version, and frees its active key; requestID (the service request) is
// recorded as DeactivatedBy. The update stages the event whitelisted_address.deactivated.
// An address changed since w was read gives apperr.ErrConflict, and nothing is staged.
func (s *Store) DeactivateWhitelisted(ctx context.Context, w address.Whitelisted, requestID string) (address.Whitelisted, error) {
	now := s.stamp()
	after := w
	after.Status, after.UpdatedAt, after.DeactivatedBy = address.StatusDeactivated, now, requestID
	seqSet, push, _, err := outbox.Stage(w.EventSeq, now, whitelistedDraft(ctx, EventWhitelistedDeactivated, after, w.Status))
	if err != nil {
		return address.Whitelisted{}, fmt.Errorf("deactivate whitelisted address %s: %w", w.ID, err)
	}
	filter := bson.D{{Key: "_id", Value: w.ID}, {Key: "companyId", Value: w.CompanyID},
		{Key: "status", Value: address.StatusActive}, {Key: "version", Value: w.Version}}
	set := append(bson.D{{Key: "status", Value: address.StatusDeactivated}, {Key: "activeKey", Value: inactiveKey(w.ID)},
		{Key: "updatedAt", Value: now}, {Key: "deactivatedBy", Value: requestID}}, seqSet...)
	update := bson.D{
		{Key: "$set", Value: set},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
		{Key: "$push", Value: push},
	}
	var doc whitelistedDoc
	err = s.db.Collection(colWhitelisted).FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return address.Whitelisted{}, fmt.Errorf("deactivate whitelisted address %s version %d: %w", w.ID, w.Version, apperr.ErrConflict)
	}
	if err != nil {
		return address.Whitelisted{}, fmt.Errorf("deactivate whitelisted address %s: %w", w.ID, err)
	}
	return doc.whitelisted(), nil
}

// SearchWhitelisted returns one page of the company's whitelisted addresses matching f,
// oldest first (ties by id), and the number of all matches: one find and one count.
func (s *Store) SearchWhitelisted(ctx context.Context, f address.Filter) ([]address.Whitelisted, int64, error) {
	and := bson.A{bson.D{{Key: "companyId", Value: f.CompanyID}}}
	and = mongodb.AppendIn(and, "address", f.Addresses)
	and = mongodb.AppendIn(and, "blockchain", f.Blockchains)
	and = mongodb.AppendIn(and, "blockchainId", f.BlockchainIDs)
	and = mongodb.AppendIn(and, "status", f.Statuses)
	if f.Fragment != "" {
		and = append(and, bson.D{{Key: "address", Value: bson.D{{Key: "$regex", Value: regexp.QuoteMeta(f.Fragment)}, {Key: "$options", Value: "i"}}}})
	}
	docs, total, err := mongodb.Search[whitelistedDoc](ctx, s.db.Collection(colWhitelisted), mongodb.Query{
		Filter: mongodb.And(and), Sort: mongodb.Sorted("createdAt", f.Page.Desc), Skip: f.Page.Offset, Limit: f.Page.Limit,
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]address.Whitelisted, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.whitelisted())
	}
	return out, total, nil
}
