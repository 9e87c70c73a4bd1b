package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/servicedesk"
)

type serviceDoc struct {
	ID           string `bson:"_id"`
	Product      string `bson:"product"`
	ProductID    int32  `bson:"productId"`
	Name         string `bson:"serviceName"`
	RequestType  string `bson:"requestType"`
	Description  string `bson:"description"`
	Template     string `bson:"template"` // JSON object
	Owner        string `bson:"owner"`
	NeedsChecker bool   `bson:"needsChecker"`
	ExpirySecs   int64  `bson:"expirySeconds"`
	VenueOnly    bool   `bson:"venueOnly"`
	// CustodianOnly is stored only when set: the services synced before it keep their form.
	CustodianOnly bool `bson:"custodianOnly,omitempty"`
}

// SyncCatalog writes the catalog definitions (idempotent; run at start-up).
func (s *Store) SyncCatalog(ctx context.Context, services []servicedesk.Service) error {
	col := s.db.Collection(colCatalog)
	for _, svc := range services {
		doc := serviceDoc{ID: svc.ID, Product: svc.Product, ProductID: svc.ProductID, Name: svc.Name,
			RequestType: svc.RequestType, Description: svc.Description, Template: svc.Template,
			Owner: svc.Owner, NeedsChecker: svc.NeedsChecker, ExpirySecs: int64(svc.Expiry / time.Second), VenueOnly: svc.VenueOnly,
			CustodianOnly: svc.CustodianOnly}
		if _, err := col.ReplaceOne(ctx, bson.D{{Key: "_id", Value: svc.ID}}, doc, options.Replace().SetUpsert(true)); err != nil {
			return fmt.Errorf("sync catalog %s: %w", svc.ID, err)
		}
	}
	return nil
}

// FindCatalog returns the catalog services matching f, ordered by service id.
func (s *Store) FindCatalog(ctx context.Context, f servicedesk.CatalogFilter) ([]servicedesk.Service, error) {
	query := bson.A{bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: nonNil(f.Entitled)}}}}}
	query = mongodb.AppendIn(query, "_id", f.ServiceIDs)
	query = mongodb.AppendIn(query, "product", f.Products)
	query = mongodb.AppendIn(query, "productId", f.ProductIDs)
	query = mongodb.AppendIn(query, "serviceName", f.ServiceNames)
	query = mongodb.AppendIn(query, "requestType", f.RequestTypes)
	if !f.Venue {
		query = append(query, bson.D{{Key: "venueOnly", Value: bson.D{{Key: "$ne", Value: true}}}})
	}
	if !f.Custodian {
		query = append(query, bson.D{{Key: "custodianOnly", Value: bson.D{{Key: "$ne", Value: true}}}})
	}
	cur, err := s.db.Collection(colCatalog).Find(ctx, mongodb.And(query), options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find catalog: %w", err)
	}
	var docs []serviceDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	out := make([]servicedesk.Service, 0, len(docs))
	for _, d := range docs {
		out = append(out, servicedesk.Service{ID: d.ID, Product: d.Product, ProductID: d.ProductID, Name: d.Name,
			RequestType: d.RequestType, Description: d.Description, Template: d.Template, Owner: d.Owner,
			NeedsChecker: d.NeedsChecker, Expiry: time.Duration(d.ExpirySecs) * time.Second, VenueOnly: d.VenueOnly,
			CustodianOnly: d.CustodianOnly})
	}
	return out, nil
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
