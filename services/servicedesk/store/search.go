package store

import (
	"context"
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/servicedesk"
)

var sortFields = map[string]string{"id": "_id", "createdAt": "createdAt", "updatedAt": "updatedAt"}

// SearchRequests returns one page of the company's requests matching f, and the number of
// all matches (mongodb.Search).
func (s *Store) SearchRequests(ctx context.Context, f servicedesk.RequestFilter) ([]servicedesk.Request, int64, error) {
	docs, total, err := mongodb.Search[requestDoc](ctx, s.db.Collection(colRequests), mongodb.Query{
		Filter: requestQuery(f), Sort: mongodb.Sorted(sortFields[f.SortBy], f.Desc), Projection: bson.D{{Key: "versions", Value: 0}, {Key: outbox.FieldOutbox, Value: 0}},
		Skip: f.Offset, Limit: f.Limit,
	})
	if err != nil {
		return nil, 0, err
	}
	items := make([]servicedesk.Request, 0, len(docs))
	for _, d := range docs {
		items = append(items, fromDoc(d))
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
