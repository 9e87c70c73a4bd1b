package catalog

// The entities whose changes the services report as events (entity.type of an event),
// declared once: each service's store stages events of its own entities under these
// names, and the events service admits each type only from the service that owns it
// (EntityOwners), so a compromised or mistaken relay cannot write another service's history.
const (
	EntityServiceRequest = "service_request"

	EntityWallet       = "wallet"
	EntityAddress      = "address"
	EntityTradingEntry = "trading_entry" // an applied entry of trading's journal

	EntitySettlement  = "settlement"
	EntityWithdrawal  = "withdrawal"
	EntityWhitelisted = "whitelisted_address"

	EntityLegacyWallet = "legacy_wallet"
	EntityTrustline    = "trustline"
	EntityCustodyEntry = "custody_entry" // an applied entry of custody's journal

	EntityVASPActivation = "vasp_activation"
)

// EntityOwners are the entity types each service may report events of.
var EntityOwners = map[string][]string{
	Servicedesk: {EntityServiceRequest},
	Trading:     {EntityWallet, EntityAddress, EntityTradingEntry},
	Interchange: {EntitySettlement, EntityWithdrawal, EntityWhitelisted},
	Custody:     {EntityLegacyWallet, EntityTrustline, EntityCustodyEntry},
	Compliance:  {EntityVASPActivation},
}
