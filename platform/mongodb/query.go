package mongodb

import "go.mongodb.org/mongo-driver/v2/bson"

// AppendIn adds the condition {field: {$in: values}} to an $and list when values is non-empty
// (an empty filter is no constraint, DESIGN.md §7).
func AppendIn[T any](and bson.A, field string, values []T) bson.A {
	if len(values) == 0 {
		return and
	}
	return append(and, bson.D{{Key: field, Value: bson.D{{Key: "$in", Value: values}}}})
}

// And wraps conditions as {$and: conditions}, or an empty filter when there are none.
func And(conditions bson.A) bson.D {
	if len(conditions) == 0 {
		return bson.D{}
	}
	return bson.D{{Key: "$and", Value: conditions}}
}
