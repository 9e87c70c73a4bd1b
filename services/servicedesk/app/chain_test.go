package app_test

import (
	"testing"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/services/internal/chaintest"
	"github.com/zcustody/suite/services/servicedesk/app"
	"github.com/zcustody/suite/services/servicedesk/server"
)

// TestChain serves the service desk as its binary does and checks its policy through the
// real interceptor chain, method by method.
func TestChain(t *testing.T) {
	cfg := app.Config{Common: config.Common{ServicePrivateKeyFile: chaintest.KeyFile(t)}, TradingAddr: chaintest.Nowhere(t),
		InterchangeAddr: chaintest.Nowhere(t), CustodyAddr: chaintest.Nowhere(t), ComplianceAddr: chaintest.Nowhere(t), SweepInterval: 1, ExecutionGrace: 1}
	c := chaintest.Start(t, server.Policy(), app.Register, cfg)
	t.Run("policy", func(t *testing.T) { c.CheckPolicy(t) })
}
