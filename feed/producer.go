package feed

import (
	"fmt"
	"time"
)

// Scope says which kind of events a producer sends odds for.
type Scope uint8

// Producer scopes; a producer may have several.
const (
	ScopeLive Scope = 1 << iota
	ScopePrematch
	ScopeVirtual
)

// String lists the scopes, such as "live|prematch".
func (s Scope) String() string {
	out := ""
	for _, n := range []struct {
		s    Scope
		name string
	}{{ScopeLive, "live"}, {ScopePrematch, "prematch"}, {ScopeVirtual, "virtual"}} {
		if s&n.s != 0 {
			if out != "" {
				out += "|"
			}
			out += n.name
		}
	}
	if out == "" {
		return "none"
	}
	return out
}

// Default heartbeat limits: how long a producer may stay silent (no alive message) before
// it is considered down.
const (
	LiveHeartbeatLimit     = 15 * time.Second
	PrematchHeartbeatLimit = 5 * time.Minute
)

// Producer describes a source of odds on the feed. Producers are data: the SDK ships the
// known ones (DefaultProducers) and a host may override any field.
type Producer struct {
	ID          int
	Name        string // short name, such as "LO"
	Description string // such as "Live Odds"
	// APIPath is the producer's segment in recovery API paths: /v1/{APIPath}/recovery/...
	APIPath string
	Scope   Scope
	// MaxRecoveryWindow is the longest span a recovery may go back in time; beyond it the
	// feed can only send a full snapshot.
	MaxRecoveryWindow time.Duration
	// HeartbeatLimit is the longest gap between two alive messages before the producer is
	// considered down.
	HeartbeatLimit time.Duration
}

// DefaultHeartbeatLimit returns the heartbeat limit for a producer of scope s: 15 s for
// producers of live or virtual odds, 5 min for prematch-only producers.
func DefaultHeartbeatLimit(s Scope) time.Duration {
	if s&(ScopeLive|ScopeVirtual) != 0 {
		return LiveHeartbeatLimit
	}
	return PrematchHeartbeatLimit
}

// Validate reports a producer that cannot be used, naming the field at fault.
func (p Producer) Validate() error {
	switch {
	case p.ID <= 0:
		return fmt.Errorf("feed: producer %q: ID %d must be positive", p.Name, p.ID)
	case p.Name == "":
		return fmt.Errorf("feed: producer %d: Name is empty", p.ID)
	case p.APIPath == "":
		return fmt.Errorf("feed: producer %d (%s): APIPath is empty", p.ID, p.Name)
	case p.Scope == 0:
		return fmt.Errorf("feed: producer %d (%s): Scope is empty", p.ID, p.Name)
	case p.MaxRecoveryWindow <= 0:
		return fmt.Errorf("feed: producer %d (%s): MaxRecoveryWindow %v must be positive", p.ID, p.Name, p.MaxRecoveryWindow)
	case p.HeartbeatLimit <= 0:
		return fmt.Errorf("feed: producer %d (%s): HeartbeatLimit %v must be positive", p.ID, p.Name, p.HeartbeatLimit)
	}
	return nil
}

// DefaultProducers returns the producers of the Unified Odds Feed, each with its recovery
// window and heartbeat limit. The slice is new on every call; change it freely.
func DefaultProducers() []Producer {
	const long, virtual = 72 * time.Hour, 3 * time.Hour
	ps := []Producer{
		{ID: 1, Name: "LO", Description: "Live Odds", APIPath: "liveodds", Scope: ScopeLive, MaxRecoveryWindow: long},
		{ID: 3, Name: "Ctrl", Description: "Betradar Ctrl", APIPath: "pre", Scope: ScopePrematch, MaxRecoveryWindow: long},
		{ID: 4, Name: "BetPal", Description: "BetPal", APIPath: "betpal", Scope: ScopeLive, MaxRecoveryWindow: long},
		{ID: 5, Name: "PremiumCricket", Description: "Premium Cricket", APIPath: "premium_cricket", Scope: ScopeLive | ScopePrematch, MaxRecoveryWindow: long},
		{ID: 6, Name: "VF", Description: "Virtual football", APIPath: "vf", Scope: ScopeVirtual, MaxRecoveryWindow: virtual},
		{ID: 7, Name: "WNS", Description: "World Number Service", APIPath: "wns", Scope: ScopePrematch, MaxRecoveryWindow: long},
		{ID: 8, Name: "VBL", Description: "Virtual Basketball League", APIPath: "vbl", Scope: ScopeVirtual, MaxRecoveryWindow: virtual},
		{ID: 9, Name: "VTO", Description: "Virtual Tennis Open", APIPath: "vto", Scope: ScopeVirtual, MaxRecoveryWindow: virtual},
		{ID: 10, Name: "VDR", Description: "Virtual Dog Racing", APIPath: "vdr", Scope: ScopeVirtual, MaxRecoveryWindow: virtual},
		{ID: 11, Name: "VHC", Description: "Virtual Horse Classics", APIPath: "vhc", Scope: ScopeVirtual, MaxRecoveryWindow: virtual},
		{ID: 12, Name: "VTI", Description: "Virtual Tennis In-Play", APIPath: "vti", Scope: ScopeVirtual, MaxRecoveryWindow: virtual},
	}
	for i := range ps {
		ps[i].HeartbeatLimit = DefaultHeartbeatLimit(ps[i].Scope)
	}
	return ps
}

// LookupProducer returns the producer with the given id from ps.
func LookupProducer(ps []Producer, id int) (Producer, bool) {
	for _, p := range ps {
		if p.ID == id {
			return p, true
		}
	}
	return Producer{}, false
}
