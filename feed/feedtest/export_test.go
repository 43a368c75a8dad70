package feedtest

// APIRoutes returns the pattern of every route the simulator's API serves, the
// catch-all for unknown routes ("/") last: the schema test checks each has documents.
func (s *Simulator) APIRoutes() []string { return s.apiRoutes() }
