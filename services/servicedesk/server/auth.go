package server

import (
	"encoding/json"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/servicedesk"
)

// actor is the calling API user as the domain names them.
func actor(p principal.Principal) servicedesk.Actor {
	return servicedesk.Actor{Email: p.UserEmail, CompanyID: p.CompanyID, CompanyName: p.CompanyName, Roles: p.Roles,
		Entitlements: p.Entitlements, Venues: p.Venues()}
}

// jsonRoundTrip turns v into the plain JSON types structpb accepts.
func jsonRoundTrip(v any) map[string]any {
	data, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}
