package carouselhttp

import (
	"bytes"
	"crypto/rand"
	_ "embed" // for the page
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/feedkit/feedkit/carousel"
)

//go:embed status.html
var statusHTML string

// pageTemplate renders status.html; html/template escapes every value from a cycle.
var pageTemplate = template.Must(template.New("status.html").Funcs(template.FuncMap{
	// barMax is a <progress> max: it must be positive, and an empty iteration shows empty.
	"barMax":  func(total int) int { return max(total, 1) },
	"percent": percent,
	"duration": func(d time.Duration) string {
		if d <= 0 {
			return "—"
		}
		return d.String()
	},
	// when formats a time as the page's script formats Go's JSON times.
	"when": func(t time.Time) string { return t.Format("2006-01-02 15:04:05Z07:00") },
}).Parse(statusHTML))

// pageData is what status.html renders.
type pageData struct {
	Title    string
	Nonce    string // allows the page's own <style> and <script> under its CSP, nothing else
	Rendered string
	Status   carousel.Status
	Blank    carousel.CycleStatus // the row the script clones for a cycle added later
}

func (a *api) statusPage(w http.ResponseWriter, _ *http.Request) error {
	data := pageData{Title: a.title, Nonce: rand.Text(), Rendered: time.Now().Format("15:04:05 MST"), Status: a.s.Status()}
	// Rendered to a buffer first, so that a template error is a clean 500.
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return fmt.Errorf("rendering the status page: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// The page needs its inline style and script and fetches from its own origin; a cycle
	// name or an error message that slipped past escaping could still run nothing.
	h.Set("Content-Security-Policy", fmt.Sprintf("default-src 'none'; script-src 'nonce-%[1]s'; style-src 'nonce-%[1]s'; "+
		"connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'", data.Nonce))
	_, _ = w.Write(buf.Bytes()) // a failed write means the client went away
	return nil
}

// percent is the whole percentage of m's iteration completed, rounded down as the page's
// script does, so that the two renderings agree.
func percent(m carousel.CycleMetadata) int {
	if m.Total <= 0 {
		return 0
	}
	return min(max(m.Completed, 0), m.Total) * 100 / m.Total
}
