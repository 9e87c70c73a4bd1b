package server

import (
	"github.com/zcustody/suite/platform/principal"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/catalog"
)

// Relays are the internal systems whose relays hand their outboxes to the log: the five
// services, each signing as itself.
var Relays = []string{catalog.Servicedesk, catalog.Trading, catalog.Interchange, catalog.Custody, catalog.Compliance}

// EntityOwners are the entity types each relaying service may append events of (the
// catalog declares them with the stores that stage them).
var EntityOwners = catalog.EntityOwners

// Policy is who may call each of the events service's methods (authz): the search any caller
// of a company, the stream a company's callers and the internal systems named in watchers
// (WATCH_SYSTEMS), the intake the services' relays only; subscriptions are changed by makers,
// and their creation, URL and secret changes decided by checkers (four eyes: the handler
// refuses a change's own maker). The handlers scope what a caller reads or changes to its
// company.
func Policy(watchers ...string) authz.Policy {
	watch := authz.Anyone
	watch.Systems = watchers
	maker := authz.Rule{Roles: []string{principal.RoleMaker}}
	checker := authz.Rule{Roles: []string{principal.RoleChecker}}
	return authz.Policy{
		eventsv1.WebhookService_CreateSubscription_FullMethodName:        maker,
		eventsv1.WebhookService_SearchSubscriptions_FullMethodName:       authz.Anyone,
		eventsv1.WebhookService_UpdateSubscription_FullMethodName:        maker,
		eventsv1.WebhookService_RotateSubscriptionSecret_FullMethodName:  maker,
		eventsv1.WebhookService_ApproveSubscriptionChange_FullMethodName: checker,
		eventsv1.WebhookService_RejectSubscriptionChange_FullMethodName:  checker,
		eventsv1.WebhookService_EnableSubscription_FullMethodName:        maker,
		eventsv1.WebhookService_DeleteSubscription_FullMethodName:        maker,
		eventsv1.WebhookService_ResendEvents_FullMethodName:              maker,
		eventsv1.WebhookService_SearchDeliveryAttempts_FullMethodName:    authz.Anyone,
		eventsv1.EventsService_SearchEvents_FullMethodName:               authz.Anyone,
		eventsv1.EventsService_WatchEvents_FullMethodName:                watch,
		eventsv1.EventLogService_AppendEvents_FullMethodName:             authz.System(Relays...),
	}
}
