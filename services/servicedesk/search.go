package servicedesk

import "time"

// RequestFilter is a validated search of endpoint 1: values OR-ed within a field, fields
// AND-ed, exact matches except Details (case-insensitive substring of the payload and entity
// ids) and ModifiedDays (the UTC day of the last change).
type RequestFilter struct {
	CompanyID    string // always applied: the caller's company
	ProductIDs   []string
	ServiceIDs   []string
	RequestTypes []string
	RequestIDs   []string
	EndToEndIDs  []string
	Statuses     []string
	ModifiedDays []time.Time // midnight UTC of each day
	Details      []string    // lower case
	EntityIDs    []string
	Limit        int64
	Offset       int64
	SortBy       string // id, createdAt or updatedAt
	Desc         bool
}
