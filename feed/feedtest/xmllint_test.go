package feedtest_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The schema tests validate with xmllint (Debian's libxml2-utils), a real XML Schema
// validator; scripts/test.sh installs it.

// xsdDir holds the published schemas, each named in its README.md.
const xsdDir = "testdata/xsd"

// xsdFeed is the feed messages' schema, under xsdDir: package feed's copy, the newest
// published, which its decoder's schema walk reads too. One copy, so that the decoder and
// the simulator are held to the same schema.
const xsdFeed = "../../../testdata/xsd/UnifiedFeed.xsd"

// xmllint returns the path of xmllint. Without it the test skips, or fails under CI=true:
// CI must not pass a check it never ran.
func xmllint(t *testing.T) string {
	t.Helper()
	path, skip, msg := findXMLLint(os.Getenv, exec.LookPath)
	switch {
	case msg == "":
		return path
	case skip:
		t.Skip(msg)
	default:
		t.Fatal(msg)
	}
	return ""
}

// findXMLLint is xmllint with the environment and exec.LookPath given: the path, or
// whether to skip and why.
func findXMLLint(getenv func(string) string, lookPath func(string) (string, error)) (path string, skip bool, msg string) {
	path, err := lookPath("xmllint")
	if err == nil {
		return path, false, ""
	}
	msg = fmt.Sprintf("no xmllint on PATH (%v): install libxml2-utils (./scripts/test.sh does, as root)", err)
	if getenv("CI") == "true" {
		return "", false, msg + "; under CI=true the schema tests may not skip"
	}
	return "", true, msg + "; skipping the schema test"
}

// document is one document the simulator produced and the schema it must satisfy.
type document struct {
	name   string // what it is, for messages, e.g. "GET /v1/users/whoami.xml (200)"
	route  string // the API route that served it; "" for a feed message
	status int    // the HTTP status it was served with; 0 for a feed message
	schema string // the schema file, under xsdDir
	body   []byte
}

// validate runs xmllint on every document against its schema and returns, for each
// document, what xmllint found wrong with it (nil when it is valid). Documents that
// share a schema go to one xmllint run.
func validate(t *testing.T, lint string, docs []document) [][]string {
	t.Helper()
	dir := t.TempDir()
	bySchema := make(map[string][]int)
	var schemas []string
	for i, d := range docs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, docFile(i)), d.body, 0o600))
		if _, ok := bySchema[d.schema]; !ok {
			schemas = append(schemas, d.schema)
		}
		bySchema[d.schema] = append(bySchema[d.schema], i)
	}
	found := make([][]string, len(docs))
	for _, schema := range schemas {
		runXMLLint(t, lint, dir, schema, bySchema[schema], found)
	}
	return found
}

func docFile(i int) string { return fmt.Sprintf("d%06d.xml", i) }

// xmllintLine is a line of xmllint's report about one file: "<file> validates",
// "<file> fails to validate", or "<file>:<line>: <error>".
var xmllintLine = regexp.MustCompile(`^(d[0-9]{6}\.xml)(?: (validates|fails to validate)|:(.*))$`)

// runXMLLint validates the documents idx, written in dir, against schema and records in
// found what it reports of each.
func runXMLLint(t *testing.T, lint, dir, schema string, idx []int, found [][]string) {
	t.Helper()
	xsd, err := filepath.Abs(filepath.Join(xsdDir, schema))
	require.NoError(t, err)
	args := []string{"--noout", "--nonet", "--schema", xsd}
	byFile := make(map[string]int, len(idx))
	for _, i := range idx {
		args = append(args, docFile(i))
		byFile[docFile(i)] = i
	}
	cmd := exec.CommandContext(t.Context(), lint, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	// 0: all valid; 3: some invalid; 1: some not even XML (reported per file). Anything
	// else, a schema that does not compile above all, is the test's own failure.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && (exit.ExitCode() == 1 || exit.ExitCode() == 3)) {
		t.Fatalf("xmllint --schema %s: %v\n%s", schema, err, out.String())
	}
	verdict := make(map[int]bool, len(idx))
	last := -1
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := xmllintLine.FindStringSubmatch(sc.Text())
		if m == nil {
			if last >= 0 { // the excerpt and caret under a parse error
				found[last] = append(found[last], sc.Text())
			}
			continue
		}
		i, ok := byFile[m[1]]
		require.True(t, ok, "xmllint reports on a file it was not given: %s", sc.Text())
		last = i
		switch m[2] {
		case "validates":
			verdict[i] = true
		case "fails to validate":
			verdict[i] = true
			if len(found[i]) == 0 {
				found[i] = append(found[i], "fails to validate")
			}
		default:
			found[i] = append(found[i], strings.TrimSpace(m[3]))
		}
	}
	require.NoError(t, sc.Err())
	for _, i := range idx {
		if !verdict[i] && len(found[i]) == 0 {
			found[i] = []string{"xmllint said nothing of it"}
		}
	}
}

// schemaException is a place where the published schema and the real API's documents
// disagree. The simulator follows the documents, so xmllint's error there is expected.
type schemaException struct {
	route  string // the API route whose documents it concerns
	status int    // the status of those documents
	err    string // part of xmllint's error
	why    string // the evidence that the real documents differ from the schema
}

// requireValid fails t for every error of every document that no exception explains,
// and for every exception that explains none: the list must stay true.
func requireValid(t *testing.T, docs []document, found [][]string, exceptions []schemaException) {
	t.Helper()
	used := make([]bool, len(exceptions))
	invalid := 0
	for i, d := range docs {
		var unexplained []string
	errs:
		for _, e := range found[i] {
			for j, x := range exceptions {
				if d.route == x.route && d.status == x.status && strings.Contains(e, x.err) {
					used[j] = true
					continue errs
				}
			}
			unexplained = append(unexplained, e)
		}
		if len(unexplained) > 0 {
			invalid++
			if invalid <= 20 {
				t.Errorf("%s does not validate against %s:\n\t%s\n%s", d.name, d.schema, strings.Join(unexplained, "\n\t"), d.body)
			}
		}
	}
	if invalid > 20 {
		t.Errorf("... and %d more invalid documents", invalid-20)
	}
	for j, x := range exceptions {
		if !used[j] {
			t.Errorf("the exception for %s (%q: %s) explains no error any more: drop it", x.route, x.err, x.why)
		}
	}
}
