package feedtest_test

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every schema committed under testdata/xsd compiles, those no test validates with yet
// too (the Sports API's fixtures, schedules, tournaments, timelines and changes), so that
// an endpoint added to the simulator finds its schema whole. The includes compile as part
// of the endpoints that include them.
func TestPublishedSchemasCompile(t *testing.T) {
	lint := xmllint(t)
	var docs []document
	err := filepath.WalkDir(xsdDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".xsd" || strings.Contains(path, "/includes/") {
			return err
		}
		rel, err := filepath.Rel(xsdDir, path)
		// A document no schema declares: xmllint says it fails to validate, which it can
		// only say of a schema that compiled.
		docs = append(docs, document{name: rel, schema: rel, body: []byte(`<not_a_document/>`)})
		return err
	})
	require.NoError(t, err)
	docs = append(docs, document{name: xsdFeed, schema: xsdFeed, body: []byte(`<not_a_document/>`)})
	require.Len(t, docs, 20, "3 of the feed and its API (the feed's in package feed), 17 Sports API endpoints")
	found := validate(t, lint, docs)
	for i, d := range docs {
		require.NotEmpty(t, found[i], d.name)
		assert.Contains(t, found[i][len(found[i])-1], "No matching global declaration available for the validation root", d.name)
	}
}

// validate reports each document's own errors: none for a valid one, the schema's
// complaint for an invalid one, the parser's for one that is not XML.
func TestValidateReportsEachDocumentsErrors(t *testing.T) {
	lint := xmllint(t)
	docs := []document{
		{name: "valid", schema: xsdFeed, body: []byte(`<alive product="1" timestamp="1764152400000" subscribed="1"/>`)},
		{name: "no subscribed", schema: xsdFeed, body: []byte(`<alive product="1" timestamp="1764152400000"/>`)},
		{name: "not XML", schema: xsdFeed, body: []byte(`missing or wrong x-access-token`)},
		{name: "valid too", schema: xsdResponse, body: []byte(`<response response_code="OK"><action>a</action><message>m</message></response>`)},
	}
	found := validate(t, lint, docs)
	assert.Empty(t, found[0])
	require.Len(t, found[1], 1)
	assert.Contains(t, found[1][0], "The attribute 'subscribed' is required but missing")
	require.NotEmpty(t, found[2])
	assert.Contains(t, found[2][0], "parser error : Start tag expected")
	assert.Empty(t, found[3])
}

func TestFindXMLLint(t *testing.T) {
	onPath := func(string) (string, error) { return "/usr/bin/xmllint", nil }
	missing := func(name string) (string, error) { return "", &exec.Error{Name: name, Err: exec.ErrNotFound} }
	env := func(ci string) func(string) string {
		return func(k string) string {
			if k == "CI" {
				return ci
			}
			return ""
		}
	}
	path, skip, msg := findXMLLint(env("true"), onPath)
	assert.Equal(t, "/usr/bin/xmllint", path)
	assert.Empty(t, msg)
	assert.False(t, skip)

	_, skip, msg = findXMLLint(env(""), missing)
	assert.True(t, skip, "outside CI a missing xmllint skips")
	assert.Contains(t, msg, "libxml2-utils")

	_, skip, msg = findXMLLint(env("1"), missing)
	assert.True(t, skip, "only CI=true is CI")
	assert.Contains(t, msg, "skipping")

	_, skip, msg = findXMLLint(env("true"), missing)
	assert.False(t, skip, "under CI=true a missing xmllint fails")
	assert.Contains(t, msg, "under CI=true the schema tests may not skip")
}
