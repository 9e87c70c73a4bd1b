package store

import (
	"strings"

	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

func toVersionDoc(v servicedesk.Version) versionDoc {
	return versionDoc{Number: v.Number, Action: v.Action, Role: v.Role, Actor: v.Actor, CompanyName: v.CompanyName,
		Status: v.Status, At: v.At, Reason: v.Reason, Signature: v.Signature, Roles: v.Roles, PrevHash: v.PrevHash, Hash: v.Hash}
}

func toDoc(r servicedesk.Request) requestDoc {
	versions := make([]versionDoc, 0, len(r.Versions))
	for _, v := range r.Versions {
		versions = append(versions, toVersionDoc(v))
	}
	var rule *ruleDoc
	if r.Rule != nil {
		d := toRuleDoc(*r.Rule)
		rule = &d
	}
	return requestDoc{PolicyVersion: r.PolicyVersion, Rule: rule, USD: r.USD, ID: r.ID, CompanyID: r.CompanyID, CompanyName: r.CompanyName, ServiceID: r.ServiceID,
		Product: r.Product, ProductID: r.ProductID, RequestType: r.RequestType, Owner: r.Owner, NeedsChecker: r.NeedsChecker,
		EndToEndID: r.EndToEndID, Payload: r.Payload, BodyHash: r.BodyHash, EntityIDs: nonNil(r.EntityIDs),
		PluginDetails: r.PluginDetails, Status: r.Status, CreatedBy: r.CreatedBy, UpdatedBy: r.UpdatedBy,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ExpiresAt: r.ExpiresAt, AuthorisedAt: r.AuthorisedAt,
		FailureReason: r.FailureReason, SearchText: searchText(r), Version: int32(len(r.Versions)), Versions: versions}
}

// searchText is what the `details` filter matches: the payload and the entity ids, lower case.
func searchText(r servicedesk.Request) string {
	return strings.ToLower(r.Payload + " " + strings.Join(r.EntityIDs, " "))
}

func fromDoc(d requestDoc) servicedesk.Request {
	versions := make([]servicedesk.Version, 0, len(d.Versions))
	for _, v := range d.Versions {
		versions = append(versions, servicedesk.Version{Number: v.Number, Action: v.Action, Role: v.Role, Actor: v.Actor,
			CompanyName: v.CompanyName, Status: v.Status, At: v.At.UTC(), Reason: v.Reason, Signature: v.Signature, Roles: v.Roles, PrevHash: v.PrevHash, Hash: v.Hash})
	}
	var rule *policy.Rule
	if d.Rule != nil {
		r := d.Rule.rule()
		rule = &r
	}
	return servicedesk.Request{PolicyVersion: d.PolicyVersion, Rule: rule, USD: d.USD, ID: d.ID, CompanyID: d.CompanyID, CompanyName: d.CompanyName, ServiceID: d.ServiceID,
		Product: d.Product, ProductID: d.ProductID, RequestType: d.RequestType, Owner: d.Owner, NeedsChecker: d.NeedsChecker,
		EndToEndID: d.EndToEndID, Payload: d.Payload, BodyHash: d.BodyHash, EntityIDs: d.EntityIDs,
		PluginDetails: d.PluginDetails, Status: d.Status, CreatedBy: d.CreatedBy, UpdatedBy: d.UpdatedBy,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), ExpiresAt: d.ExpiresAt.UTC(), AuthorisedAt: d.AuthorisedAt.UTC(),
		FailureReason: d.FailureReason, Versions: versions}
}
