package server

import (
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/catalog"
)

// Policy is who may call each of the service desk's gRPC methods (authz): reads by any API
// user of a company, create and cancel by a MAKER, approve by a MAKER (confirming their own)
// or a CHECKER, the audit-chain check by internal systems, identity look-ups by the gateway
// (GetCaller) and internal systems (GetUser). The handlers check four eyes (servicedesk.Decide).
func Policy() authz.Policy {
	makers := authz.Rule{Roles: []string{principal.RoleMaker}}
	return authz.Policy{
		servicedeskv1.ServicedeskService_SearchRequests_FullMethodName:     authz.Users,
		servicedeskv1.ServicedeskService_ListProducts_FullMethodName:       authz.Users,
		servicedeskv1.ServicedeskService_GetAuditTrail_FullMethodName:      authz.Users,
		servicedeskv1.ServicedeskService_GetPendingRequest_FullMethodName:  authz.Users,
		servicedeskv1.ServicedeskService_GetPolicy_FullMethodName:          authz.Users,
		servicedeskv1.ServicedeskService_ListPolicyVersions_FullMethodName: authz.Users,
		servicedeskv1.ServicedeskService_DryRunPolicy_FullMethodName:       authz.Users,
		servicedeskv1.ServicedeskService_CreateRequest_FullMethodName:      makers,
		servicedeskv1.ServicedeskService_CancelRequest_FullMethodName:      makers,
		servicedeskv1.ServicedeskService_ApproveRequest_FullMethodName:     {Roles: []string{principal.RoleMaker, principal.RoleChecker}},
		servicedeskv1.ServicedeskService_VerifyAuditTrail_FullMethodName:   authz.System("*"),
		servicedeskv1.ServicedeskService_GetCompanyLimits_FullMethodName:   authz.System(catalog.Interchange),
		servicedeskv1.IdentityService_GetCaller_FullMethodName:             authz.System("gateway", catalog.Custody),
		servicedeskv1.IdentityService_GetUser_FullMethodName:               authz.System(catalog.Custody),
	}
}
