package plugin_test

import (
	"os"
	"testing"

	"github.com/zcustody/suite/platform/testdb"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes).
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, nil, nil))
}
