package settlement

import "slices"

// Parties are the companies whose wallets the legs name, sorted, each once (none on legs
// stored before their company was kept).
func (s Settlement) Parties() []string {
	out := make([]string, 0, len(s.Legs))
	for _, l := range s.Legs {
		if l.CompanyID != "" {
			out = append(out, l.CompanyID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Viewer is who reads settlements: a company, and the venues it operates.
type Viewer struct {
	CompanyID string
	Venues    []string
}

// Operates reports whether v instructed s or operates its venue: it sees s whole.
func (v Viewer) Operates(s Settlement) bool {
	return s.CompanyID == v.CompanyID || slices.Contains(v.Venues, s.VenueID)
}

// SeenBy is s as v may see it: whole by its venue's side; by a client whose wallets it
// moves, only that client's legs, and no nets (a net adds up every client's legs).
func (s Settlement) SeenBy(v Viewer) Settlement {
	if v.Operates(s) {
		return s
	}
	s.Legs = slices.DeleteFunc(slices.Clone(s.Legs), func(l Leg) bool { return l.CompanyID != v.CompanyID })
	s.Nets, s.Shares = nil, nil
	return s
}
