package feedtest

import "sort"

// APIRoutes returns the pattern of every route the simulator's API serves, the
// catch-all for unknown routes ("/") last: the schema test checks each has documents.
func (s *Simulator) APIRoutes() []string { return s.apiRoutes() }

// APILanguages returns the languages the simulator's API serves, sorted.
func APILanguages() []string {
	langs := make([]string, 0, len(apiLanguages))
	for l := range apiLanguages {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	return langs
}
