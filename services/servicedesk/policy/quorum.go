package policy

import "slices"

// Approver is a user who approved a request, as the desk knew them when they approved.
type Approver struct {
	Email string
	Roles []string
}

// Has reports whether a belongs to g: named in it, or holding one of its roles.
func (g Group) Has(a Approver) bool {
	if slices.Contains(g.Users, a.Email) {
		return true
	}
	return slices.ContainsFunc(g.Roles, func(role string) bool { return slices.Contains(a.Roles, role) })
}

// Eligible reports whether a may approve or reject, under r, a request its maker made: a
// member of one of r's groups who is not the maker.
func (r Rule) Eligible(a Approver, maker string) bool {
	if r.Action != ActionApprove || a.Email == "" || a.Email == maker {
		return false
	}
	return slices.ContainsFunc(r.Groups, func(g Group) bool { return g.Has(a) })
}

// GroupCount is how far one group of a rule is: the approvals that count for it, of its
// threshold.
type GroupCount struct {
	Name      string
	Threshold int
	Approvals int
}

// Missing is how many more approvals the group needs.
func (g GroupCount) Missing() int { return max(0, g.Threshold-g.Approvals) }

// Tally is how far a request is towards its rule's quorum.
type Tally struct {
	Groups []GroupCount
	// Met: the rule's groups are satisfied (every one for AND, one for OR); always true for
	// ALLOW, never for BLOCK.
	Met bool
	// Combine is the rule's combination of its groups.
	Combine string
}

// Missing is how many more approvals the quorum needs at the least: none once met; the
// groups' missing approvals summed under AND, the fewest of one group under OR.
func (t Tally) Missing() int {
	if t.Met || len(t.Groups) == 0 {
		return 0
	}
	n := t.Groups[0].Missing()
	for _, g := range t.Groups[1:] {
		if t.Combine == CombineOr {
			n = min(n, g.Missing())
		} else {
			n += g.Missing()
		}
	}
	return n
}

// Tally counts approvers towards r's quorum for a request made by maker. Each distinct
// eligible user counts once: the maker, a user outside every group and a repeated approver
// count for nothing. Under AND a user counts towards one group only, so "two of treasury
// and one of risk" needs three people even when one of them is in both groups: the
// approvers are assigned to the groups' seats by a maximum matching.
func (r Rule) Tally(approvers []Approver, maker string) Tally {
	switch r.Action {
	case ActionAllow:
		return Tally{Met: true}
	case ActionBlock:
		return Tally{}
	}
	var eligible []Approver
	seen := map[string]bool{}
	for _, a := range approvers {
		if !seen[a.Email] && r.Eligible(a, maker) {
			seen[a.Email] = true
			eligible = append(eligible, a)
		}
	}
	t := Tally{Groups: make([]GroupCount, len(r.Groups)), Combine: r.Combine}
	for i, g := range r.Groups {
		t.Groups[i] = GroupCount{Name: g.Name, Threshold: g.Threshold}
	}
	if r.Combine == CombineOr {
		for i, g := range r.Groups {
			for _, a := range eligible {
				if g.Has(a) && t.Groups[i].Approvals < g.Threshold {
					t.Groups[i].Approvals++
				}
			}
			t.Met = t.Met || t.Groups[i].Approvals >= g.Threshold
		}
		return t
	}
	seats := r.seats()
	for g, n := range assign(eligible, seats, r.Groups) {
		t.Groups[g].Approvals = n
	}
	t.Met = true
	for _, g := range t.Groups {
		t.Met = t.Met && g.Missing() == 0
	}
	return t
}

// seats lists, for AND, one seat per approval each group needs, by the group's index.
func (r Rule) seats() []int {
	var seats []int
	for i, g := range r.Groups {
		for range g.Threshold {
			seats = append(seats, i)
		}
	}
	return seats
}

// assign matches approvers to seats (a seat of group g takes a member of g), as many as
// possible (Kuhn's augmenting paths: approvers and seats are a few dozen at most), and
// returns how many seats of each group are taken.
func assign(approvers []Approver, seats []int, groups []Group) map[int]int {
	holder := make([]int, len(seats)) // seat → approver index + 1 (0: free)
	var try func(a int, visited []bool) bool
	try = func(a int, visited []bool) bool {
		for s, g := range seats {
			if visited[s] || !groups[g].Has(approvers[a]) {
				continue
			}
			visited[s] = true
			if holder[s] == 0 || try(holder[s]-1, visited) {
				holder[s] = a + 1
				return true
			}
		}
		return false
	}
	for a := range approvers {
		try(a, make([]bool, len(seats)))
	}
	taken := map[int]int{}
	for s, h := range holder {
		if h != 0 {
			taken[seats[s]]++
		}
	}
	return taken
}
