package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/compliance"
)

type addressDoc struct {
	Line1   string `bson:"line1"`
	City    string `bson:"city"`
	Country string `bson:"country"`
}

type beneficiaryDoc struct {
	ID                string      `bson:"_id"` // BNF-<COMPANY>-<10>
	CompanyID         string      `bson:"companyId"`
	EntityType        string      `bson:"entityType"`
	Name              string      `bson:"beneficiaryName"`
	LegalName         string      `bson:"legalName"`
	RegisteredAddress addressDoc  `bson:"registeredAddress"`
	OperatingAddress  *addressDoc `bson:"operatingAddress"` // null when none was given
	Status            string      `bson:"status"`
	Version           int64       `bson:"version"`
	CreatedAt         time.Time   `bson:"createdAt"`
	UpdatedAt         time.Time   `bson:"updatedAt"`
	CreatedBy         string      `bson:"createdBy"`
	LastRequestID     string      `bson:"lastRequestId"`
}

func toBeneficiaryDoc(b compliance.Beneficiary) beneficiaryDoc {
	return beneficiaryDoc{ID: b.ID, CompanyID: b.CompanyID, EntityType: b.EntityType, Name: b.Name, LegalName: b.LegalName,
		RegisteredAddress: addressDoc(b.RegisteredAddress), OperatingAddress: (*addressDoc)(b.OperatingAddress), Status: b.Status,
		Version: b.Version, CreatedAt: ms(b.CreatedAt), UpdatedAt: ms(b.UpdatedAt), CreatedBy: b.CreatedBy, LastRequestID: b.LastRequestID}
}

func (d beneficiaryDoc) beneficiary() compliance.Beneficiary {
	return compliance.Beneficiary{ID: d.ID, CompanyID: d.CompanyID, EntityType: d.EntityType, Name: d.Name, LegalName: d.LegalName,
		RegisteredAddress: compliance.Address(d.RegisteredAddress), OperatingAddress: (*compliance.Address)(d.OperatingAddress),
		Status: d.Status, Version: d.Version, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), CreatedBy: d.CreatedBy,
		LastRequestID: d.LastRequestID}
}

// ms is t in UTC at the database's millisecond precision, so what is written reads back equal.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func (s *Store) beneficiaries() *mongo.Collection { return s.db.Collection(colBeneficiaries) }

// InsertBeneficiary creates b under its reserved id; a taken id answers apperr.ErrExists.
func (s *Store) InsertBeneficiary(ctx context.Context, b compliance.Beneficiary) error {
	_, err := s.beneficiaries().InsertOne(ctx, toBeneficiaryDoc(b))
	if mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("insert beneficiary %s: %w", b.ID, apperr.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("insert beneficiary %s: %w", b.ID, err)
	}
	return nil
}

// PutBeneficiary creates or replaces a beneficiary as a whole (demo data and tests; requests
// go through InsertBeneficiary and ChangeBeneficiary).
func (s *Store) PutBeneficiary(ctx context.Context, b compliance.Beneficiary) error {
	_, err := s.beneficiaries().ReplaceOne(ctx, bson.D{{Key: "_id", Value: b.ID}}, toBeneficiaryDoc(b), options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("put beneficiary %s: %w", b.ID, err)
	}
	return nil
}

// Beneficiary returns the company's beneficiary id, or apperr.ErrNotFound (also when it
// belongs to another company).
func (s *Store) Beneficiary(ctx context.Context, companyID, id string) (compliance.Beneficiary, error) {
	var doc beneficiaryDoc
	err := s.beneficiaries().FindOne(ctx, bson.D{{Key: "companyId", Value: companyID}, {Key: "_id", Value: id}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return compliance.Beneficiary{}, errNotFound("beneficiary", id)
	}
	if err != nil {
		return compliance.Beneficiary{}, fmt.Errorf("find beneficiary %s: %w", id, err)
	}
	return doc.beneficiary(), nil
}

// ChangeBeneficiary writes after over before for request requestID in one conditional update
// guarded by before's version and the ACTIVE status: the name, addresses and status change,
// the version goes up by one. A beneficiary that changed meanwhile (or is gone, or no longer
// ACTIVE) answers apperr.ErrConflict.
func (s *Store) ChangeBeneficiary(ctx context.Context, before, after compliance.Beneficiary, requestID string) (compliance.Beneficiary, error) {
	filter := bson.D{{Key: "_id", Value: before.ID}, {Key: "companyId", Value: before.CompanyID},
		{Key: "status", Value: compliance.StatusActive}, {Key: "version", Value: before.Version}}
	doc := toBeneficiaryDoc(after)
	update := bson.D{
		{Key: "$set", Value: bson.D{
			{Key: "beneficiaryName", Value: doc.Name}, {Key: "legalName", Value: doc.LegalName},
			{Key: "registeredAddress", Value: doc.RegisteredAddress}, {Key: "operatingAddress", Value: doc.OperatingAddress},
			{Key: "status", Value: doc.Status}, {Key: "updatedAt", Value: ms(s.now())}, {Key: "lastRequestId", Value: requestID},
		}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}
	var out beneficiaryDoc
	err := s.beneficiaries().FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return compliance.Beneficiary{}, fmt.Errorf("update beneficiary %s at version %d: %w", before.ID, before.Version, apperr.ErrConflict)
	}
	if err != nil {
		return compliance.Beneficiary{}, fmt.Errorf("update beneficiary %s: %w", before.ID, err)
	}
	return out.beneficiary(), nil
}
