package recovery_test

import (
	"path/filepath"
	"testing"

	"github.com/feedkit/feedkit/recovery"
	"github.com/feedkit/feedkit/recovery/recoverytest"
)

func TestMemoryLedgerConformance(t *testing.T) {
	recoverytest.TestLedger(t, func(*testing.T) recovery.Ledger { return recovery.NewMemoryLedger() })
}

func TestMemoryStoreConformance(t *testing.T) {
	recoverytest.TestStore(t, func(*testing.T) recovery.Store { return recovery.NewMemoryStore() })
}

func TestMemoryStoreFencedConformance(t *testing.T) {
	recoverytest.TestFencedStore(t, func(*testing.T) recovery.FencedStore { return recovery.NewMemoryStore() })
}

func TestFileStoreConformance(t *testing.T) {
	recoverytest.TestStore(t, func(t *testing.T) recovery.Store {
		return recovery.NewFileStore(filepath.Join(t.TempDir(), "p.json"))
	})
}
