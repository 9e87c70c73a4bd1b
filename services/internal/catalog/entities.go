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

	// A ledger's scheduled reconciliation (services/internal/control), one entity per
	// service that runs one; its events go to the custodian's operators.
	EntityTradingReconciliation     = "trading_reconciliation"
	EntityCustodyReconciliation     = "custody_reconciliation"
	EntityInterchangeReconciliation = "interchange_reconciliation"
)

// EntityOwners are the entity types each service may report events of.
var EntityOwners = map[string][]string{
	Servicedesk: {EntityServiceRequest},
	Trading:     {EntityWallet, EntityAddress, EntityTradingEntry, EntityTradingReconciliation},
	Interchange: {EntitySettlement, EntityWithdrawal, EntityWhitelisted, EntityInterchangeReconciliation},
	Custody:     {EntityLegacyWallet, EntityTrustline, EntityCustodyEntry, EntityCustodyReconciliation},
	Compliance:  {EntityVASPActivation},
}
