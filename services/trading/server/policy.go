package server

import (
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Policy is who may call each of trading's gRPC methods (authz), the one place that decides
// it: the wallet search by any caller of a company (endpoint 2 sends submitter-id;
// interchange checks settlement wallets with the company-level caller's own forwarded
// principal, or as itself acting for the company named in its token when the settlement
// engine instructs), the statement extensions (a wallet's history and its balances as of a
// time) by any caller of a company, the vault-address search (endpoint 7) by a company's API
// users, journal
// entries, holds, system-account reads and the price table by interchange (which values its
// service requests for the approval policy), deposits, reconciliation and
// prices by the settlement engine, the plugin API by the service desk. A system's token is
// believed only from the system itself (principal.Verifier). The handlers scope what a
// caller sees to its company (and an operator's venues), and check no role.
func Policy() authz.Policy {
	return authz.Policy{
		tradingv1.TradingService_SearchWallets_FullMethodName:          {Company: true, Roles: authz.Anyone.Roles, Systems: []string{MovementSystem}},
		tradingv1.TradingService_ListVaultAddresses_FullMethodName:     authz.Users,
		tradingv1.TradingService_ListWalletHistory_FullMethodName:      authz.Anyone,
		tradingv1.TradingService_GetWalletBalanceAsOf_FullMethodName:   authz.Anyone,
		tradingv1.TradingLedgerService_RecordEntry_FullMethodName:      authz.System(MovementSystem),
		tradingv1.TradingLedgerService_ResolveHold_FullMethodName:      authz.System(MovementSystem),
		tradingv1.TradingLedgerService_RecordDeposit_FullMethodName:    authz.System(PriceSystem),
		tradingv1.TradingLedgerService_Reconcile_FullMethodName:        authz.System(PriceSystem),
		tradingv1.TradingLedgerService_SetPrices_FullMethodName:        authz.System(PriceSystem),
		tradingv1.TradingLedgerService_GetSystemAccount_FullMethodName: authz.System(MovementSystem),
		tradingv1.TradingLedgerService_GetPrices_FullMethodName:        authz.System(MovementSystem),
		pluginv1.PluginService_Validate_FullMethodName:                 authz.System(plugin.ServicedeskSystem),
		pluginv1.PluginService_Execute_FullMethodName:                  authz.System(plugin.ServicedeskSystem),
	}
}
