package app_test

import (
	"testing"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/chaintest"
	"github.com/zcustody/suite/services/trading/app"
	"github.com/zcustody/suite/services/trading/server"
)

// TestChain serves trading as its binary does and checks its policy through the real
// interceptor chain, method by method; the handlers check no role of their own.
func TestChain(t *testing.T) {
	cfg := app.Config{Common: config.Common{}, OperatorKeyFile: chaintest.KeyFile(t), RecoveryInterval: 1, RecoveryGrace: 1}
	c := chaintest.Start(t, server.Policy(), app.Register, cfg)
	// Interchange reads wallets acting for a company its token names; acting for none, it
	// has no wallets to see.
	t.Run("policy", func(t *testing.T) {
		c.CheckPolicy(t, chaintest.Unscoped{Method: tradingv1.TradingService_SearchWallets_FullMethodName, Caller: "system interchange"})
	})
	t.Run("who the handlers no longer check", func(t *testing.T) {
		for _, m := range []string{tradingv1.TradingLedgerService_RecordEntry_FullMethodName, tradingv1.TradingLedgerService_ResolveHold_FullMethodName,
			tradingv1.TradingLedgerService_GetSystemAccount_FullMethodName, tradingv1.TradingLedgerService_GetPrices_FullMethodName} {
			c.Admitted(t, m, "interchange", chaintest.System(server.MovementSystem))
			c.Refused(t, m, "the settlement engine", chaintest.System(server.PriceSystem))
			c.Refused(t, m, "the company", chaintest.Company(chaintest.ClientCompany))
		}
		for _, m := range []string{tradingv1.TradingLedgerService_RecordDeposit_FullMethodName, tradingv1.TradingLedgerService_Reconcile_FullMethodName,
			tradingv1.TradingLedgerService_SetPrices_FullMethodName} {
			c.Admitted(t, m, "the settlement engine", chaintest.System(server.PriceSystem))
			c.Refused(t, m, "interchange", chaintest.System(server.MovementSystem))
			c.Refused(t, m, "the company", chaintest.Company(chaintest.ClientCompany))
		}
		wallets := tradingv1.TradingService_SearchWallets_FullMethodName
		c.Admitted(t, wallets, "a viewer", chaintest.User(chaintest.ClientCompany, principal.RoleViewer))
		c.Admitted(t, wallets, "interchange acting for a company", principal.Principal{Kind: principal.KindSystem, System: server.MovementSystem, CompanyID: chaintest.ClientCompany})
		c.Refused(t, wallets, "the settlement engine", chaintest.System(server.PriceSystem))
		c.Refused(t, tradingv1.TradingService_ListVaultAddresses_FullMethodName, "the company", chaintest.Company(chaintest.ClientCompany))
	})
}
