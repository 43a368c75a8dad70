package carouselhttp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/carouselhttp"
	"github.com/feedkit/feedkit/internal/testenv"
)

// screenshotVar, when set to a file name, makes TestStatusPageInChromium save a
// screenshot of the page there, for a person to look at.
const screenshotVar = "FEEDKIT_STATUS_SCREENSHOT"

// chromiumTimeout bounds one Chromium run; it takes a second or two.
const chromiumTimeout = 90 * time.Second

// pageAttrRE matches one attribute of a start tag.
var pageAttrRE = regexp.MustCompile(`([\w-]+)(?:="([^"]*)")?`)

// pageElements returns the attributes of every tag element of page whose attribute
// data-cycle is cycle, in document order. Both Go's templates and Chromium's DOM
// serializer quote every attribute value with double quotes.
func pageElements(page, tag, cycle string) []map[string]string {
	var out []map[string]string
	for _, m := range regexp.MustCompile(`<`+tag+`\b([^>]*)>`).FindAllStringSubmatch(page, -1) {
		attrs := make(map[string]string)
		for _, a := range pageAttrRE.FindAllStringSubmatch(m[1], -1) {
			attrs[a[1]] = a[2]
		}
		if c, ok := attrs["data-cycle"]; ok && c == cycle {
			out = append(out, attrs)
		}
	}
	return out
}

// pageRow returns the markup of cycle's table row.
func pageRow(t *testing.T, page, cycle string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr class="cycle[^"]*" data-cycle="` + regexp.QuoteMeta(cycle) + `".*?</tr>`).FindString(page)
	require.NotEmpty(t, m, "no row for cycle %s in:\n%s", cycle, page)
	return m
}

// assertProgress checks that cycle has exactly one progress bar in the page, at value of
// maximum.
func assertProgress(t *testing.T, page, cycle, value, maximum string) {
	t.Helper()
	bars := pageElements(page, "progress", cycle)
	require.Len(t, bars, 1, "progress bars of %s", cycle)
	assert.Equal(t, "progress", bars[0]["class"])
	assert.Equal(t, value, bars[0]["value"], "progress of %s", cycle)
	assert.Equal(t, maximum, bars[0]["max"], "progress maximum of %s", cycle)
}

func TestStatusPageRendersOnTheServer(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.threeCycles()
	// Origins are free text: the page must show this one, not run it.
	hostile := `<img src=x onerror="alert(1)">`
	f.add(carousel.CycleConfig{Name: "delta", Type: carousel.ThrottledWholeCollection, Origin: hostile,
		Collection: "empty", CoolDown: time.Minute, Throttle: time.Second})

	rec := f.do(http.MethodGet, "/", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	page := rec.Body.String()

	assertProgress(t, page, "alpha", "3", "10")
	assertProgress(t, page, "beta", "7", "20")
	assertProgress(t, page, "gamma", "2", "5")
	assertProgress(t, page, "delta", "0", "1")

	alpha := pageRow(t, page, "alpha")
	assert.Contains(t, alpha, `<span class="badge state-running">running</span>`)
	assert.Contains(t, alpha, `<span data-field="count">3 / 10</span> (<span data-field="percent">30%</span>)`)
	assert.Contains(t, alpha, `data-field="current">articles-04<`)
	assert.Contains(t, alpha, `data-field="throttle">30s<`)
	gamma := pageRow(t, page, "gamma")
	assert.Contains(t, gamma, `<tr class="cycle unhealthy"`)
	assert.Contains(t, gamma, `<span class="badge state-unhealthy">unhealthy</span>`)
	assert.Contains(t, gamma, `<span data-field="window-start">2026-03-02 07:00:00Z</span><span data-field="window-end">→ 2026-03-02 08:00:00Z</span>`)
	assert.Contains(t, pageRow(t, page, "beta"), `<button type="button" data-action="stop" disabled>`)

	assert.NotContains(t, page, hostile)
	assert.Contains(t, page, "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;")

	// The CSP lets the page's own style and script run, by the nonce they carry.
	csp := rec.Header().Get("Content-Security-Policy")
	m := regexp.MustCompile(`script-src 'nonce-([^']+)'`).FindStringSubmatch(csp)
	require.NotNil(t, m, "CSP: %s", csp)
	assert.Contains(t, page, `<script nonce="`+m[1]+`">`)
	assert.Contains(t, page, `<style nonce="`+m[1]+`">`)
	assert.NotEqual(t, csp, f.do(http.MethodGet, "/", "").Header().Get("Content-Security-Policy"), "a nonce per response")
}

func TestStatusPageTitle(t *testing.T) {
	s, err := carousel.NewScheduler(carousel.NewMemorySource(),
		carousel.PublisherFunc(func(context.Context, carousel.Publication) error { return nil }),
		carousel.Config{Store: carousel.NewMemoryStore()})
	require.NoError(t, err)
	for title, want := range map[string]string{"": "<title>Carousel</title>", "Prod & co": "<title>Prod &amp; co</title>"} {
		rec := httptest.NewRecorder()
		carouselhttp.NewHandler(s, carouselhttp.HandlerOptions{Title: title}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Contains(t, rec.Body.String(), want)
		assert.Contains(t, rec.Body.String(), `<p id="no-cycles">No cycles.</p>`)
	}
}

// TestStatusPageInChromium loads the page in headless Chromium and checks the DOM after
// its script ran: every cycle's progress bar at its value, and the rows refreshed from
// GET /cycles. The first GET /cycles sees a changed throttle and a new cycle that the
// server-rendered page did not have, so that only the script can have put them there.
func TestStatusPageInChromium(t *testing.T) {
	chromium := testenv.Chromium(t)
	f := newAPIFixture(t, nil)
	f.threeCycles()
	epsilon := carousel.CycleConfig{Name: "epsilon", Type: carousel.ThrottledWholeCollection, Origin: "new",
		Collection: "empty", CoolDown: time.Hour, Throttle: time.Second}

	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/cycles" {
			once.Do(func() {
				assert.NoError(t, f.s.SetThrottle("alpha", 7*time.Second))
				assert.NoError(t, f.s.Add(context.Background(), epsilon))
			})
		}
		f.h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dom := runChromium(t, chromium, "--dump-dom", srv.URL+"/")

	refreshed := pageElementByID(t, dom, "refreshed")
	assert.NotEmpty(t, refreshed["data-updated"], "the script never rendered GET /cycles:\n%s", dom)

	assertProgress(t, dom, "alpha", "3", "10")
	assertProgress(t, dom, "beta", "7", "20")
	assertProgress(t, dom, "gamma", "2", "5")
	assertProgress(t, dom, "epsilon", "0", "1")
	for _, id := range []string{"alpha", "beta", "gamma", "epsilon"} {
		rows := pageElements(dom, "tr", id)
		require.Len(t, rows, 1, "rows of %s", id)
		assert.NotEmpty(t, rows[0]["data-updated"], "row %s not refreshed by the script", id)
	}
	alpha := pageRow(t, dom, "alpha")
	assert.Contains(t, alpha, `data-field="throttle">7s<`, "alpha's row shows the throttle of GET /cycles")
	assert.Contains(t, alpha, `data-field="percent">30%<`)
	gamma := pageRow(t, dom, "gamma")
	assert.Contains(t, gamma, `<span class="badge state-unhealthy">unhealthy</span>`)
	assert.Contains(t, gamma, `<span data-field="window-start">2026-03-02 07:00:00Z</span><span data-field="window-end">→ 2026-03-02 08:00:00Z</span>`,
		"the script formats times as the server does")
	assert.Contains(t, pageRow(t, dom, "epsilon"), `data-field="route">empty → new<`)
	msg := regexp.MustCompile(`<p id="message"[^>]*>([^<]*)</p>`).FindStringSubmatch(dom)
	require.NotNil(t, msg, "no #message")
	assert.Empty(t, msg[1], "the page reports a problem")

	if path := os.Getenv(screenshotVar); path != "" {
		runChromium(t, chromium, "--screenshot="+path, "--window-size=1200,800", srv.URL+"/")
		t.Logf("screenshot of the status page in %s", path)
	}
}

// pageElementByID returns the attributes of the element of page with the id.
func pageElementByID(t *testing.T, page, id string) map[string]string {
	t.Helper()
	m := regexp.MustCompile(`<\w+\b([^>]*\bid="` + regexp.QuoteMeta(id) + `"[^>]*)>`).FindStringSubmatch(page)
	require.NotNil(t, m, "no element #%s", id)
	attrs := make(map[string]string)
	for _, a := range pageAttrRE.FindAllStringSubmatch(m[1], -1) {
		attrs[a[1]] = a[2]
	}
	return attrs
}

// runChromium runs headless Chromium with args after its usual flags, and returns what
// it printed on stdout. The virtual time budget lets the page's script run for five
// seconds of page time (its timers, two polls) without the test waiting that long for
// nothing: Chromium exits once the page is idle and the budget spent.
func runChromium(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), chromiumTimeout)
	defer cancel()
	argv := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
		"--no-first-run", "--no-proxy-server", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000",
	}, args...)
	cmd := exec.CommandContext(ctx, chromium, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Chromium's helper processes may hold the pipes open after a kill.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", chromium, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}
