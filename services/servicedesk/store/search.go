package store

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/mongodb"
	"github.com/zcustody/suite/services/servicedesk"
)

var sortFields = map[string]string{"id": "_id", "createdAt": "createdAt", "updatedAt": "updatedAt"}

// SearchRequests returns one page of the company's requests matching f, and the number of
// all matches: one find and one count.
func (s *Store) SearchRequests(ctx context.Context, f servicedesk.RequestFilter) ([]servicedesk.Request, int64, error) {
	filter := requestQuery(f)
	dir := 1
	if f.Desc {
		dir = -1
	}
	sort := bson.D{{Key: sortFields[f.SortBy], Value: dir}}
	if f.SortBy != "id" {
		sort = append(sort, bson.E{Key: "_id", Value: dir})
	}
	opts := options.Find().SetSort(sort).SetSkip(f.Offset).SetLimit(f.Limit).SetProjection(bson.D{{Key: "versions", Value: 0}})
	items, err := s.findMany(ctx, filter, opts)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.db.Collection(colRequests).CountDocuments(ctx, filter)
	if err != nil {
		return nil, 0, fmt.Errorf("count requests: %w", err)
	}
	return items, total, nil
}

func requestQuery(f servicedesk.RequestFilter) bson.D {
	and := bson.A{bson.D{{Key: "companyId", Value: f.CompanyID}}}
	and = mongodb.AppendIn(and, "productId", f.ProductIDs)
	and = mongodb.AppendIn(and, "serviceId", f.ServiceIDs)
	and = mongodb.AppendIn(and, "requestType", f.RequestTypes)
	and = mongodb.AppendIn(and, "_id", f.RequestIDs)
	and = mongodb.AppendIn(and, "endToEndId", f.EndToEndIDs)
	and = mongodb.AppendIn(and, "status", f.Statuses)
	and = mongodb.AppendIn(and, "entityIds", f.EntityIDs)
	if len(f.ModifiedDays) > 0 {
		days := bson.A{}
		for _, d := range f.ModifiedDays {
			days = append(days, bson.D{{Key: "updatedAt", Value: bson.D{{Key: "$gte", Value: d}, {Key: "$lt", Value: d.Add(24 * time.Hour)}}}})
		}
		and = append(and, bson.D{{Key: "$or", Value: days}})
	}
	if len(f.Details) > 0 {
		texts := bson.A{}
		for _, d := range f.Details {
			texts = append(texts, bson.D{{Key: "searchText", Value: bson.D{{Key: "$regex", Value: regexp.QuoteMeta(d)}}}})
		}
		and = append(and, bson.D{{Key: "$or", Value: texts}})
	}
	return mongodb.And(and)
}
