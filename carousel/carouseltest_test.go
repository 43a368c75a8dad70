package carousel_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/carouseltest"
)

func TestMemorySourceConformance(t *testing.T) {
	carouseltest.TestSource(t, func(t *testing.T, collection string, items []carousel.Item) carousel.Source {
		s := carousel.NewMemorySource()
		// A neighbour collection that the suite must never see.
		require.NoError(t, s.Put(collection+"-other", carousel.Item{ID: "a1"}, carousel.Item{ID: "zz"}))
		require.NoError(t, s.Put(collection, items...))
		return s
	})
}

func TestMemoryStoreConformance(t *testing.T) {
	carouseltest.TestMetadataStore(t, func(*testing.T) carousel.MetadataStore { return carousel.NewMemoryStore() })
}

func TestFileStoreConformance(t *testing.T) {
	carouseltest.TestMetadataStore(t, func(t *testing.T) carousel.MetadataStore {
		return carousel.NewFileStore(filepath.Join(t.TempDir(), "metadata.json"))
	})
}

// Every store read after a restart: a new FileStore over the same file.
func TestFileStoreAfterRestartConformance(t *testing.T) {
	carouseltest.TestMetadataStore(t, func(t *testing.T) carousel.MetadataStore {
		return newReopening(filepath.Join(t.TempDir(), "metadata.json"))
	})
}

func TestMemoryStoreFailover(t *testing.T) {
	carouseltest.TestFailover(t, func(*testing.T) carousel.MetadataStore { return carousel.NewMemoryStore() })
}

func TestFileStoreFailover(t *testing.T) {
	carouseltest.TestFailover(t, func(t *testing.T) carousel.MetadataStore {
		return carousel.NewFileStore(filepath.Join(t.TempDir(), "metadata.json"))
	})
}

// Each instance with a FileStore of its own on the one file, read again at every call:
// the file is what they share.
func TestFileStoreAfterRestartFailover(t *testing.T) {
	carouseltest.TestFailover(t, func(t *testing.T) carousel.MetadataStore {
		return newReopening(filepath.Join(t.TempDir(), "metadata.json"))
	})
}
