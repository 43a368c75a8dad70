package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/recording"
)

// summary is what inspect says of a recording.
type summary struct {
	Frames     int64            `json:"frames"`
	Deliveries int64            `json:"deliveries"`
	Responses  int64            `json:"api_responses"`
	First      time.Time        `json:"first,omitzero"`
	Last       time.Time        `json:"last,omitzero"`
	ByType     map[string]int64 `json:"by_type"`
	ByProducer map[string]int64 `json:"by_producer"`
	ByStatus   map[string]int64 `json:"api_by_status"`
	Events     int              `json:"events"`
	TopEvents  []eventCount     `json:"top_events"`
	// Torn says where a torn recording stopped; empty for a whole one.
	Torn string `json:"torn,omitempty"`
}

type eventCount struct {
	Event    string `json:"event"`
	Messages int64  `json:"messages"`
}

// inspect prints what a recording holds, or one event's messages.
func inspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", stderr)
	event := fs.String("event", "", "print this event's messages (a URN such as sr:match:1), in order, decoded")
	asJSON := fs.Bool("json", false, "print JSON")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	var only feed.URN
	if *event != "" {
		if only, err = feed.ParseURN(*event); err != nil {
			return &usageError{fmt.Sprintf("inspect: -event: %v", err)}
		}
	}
	f, r, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s := summary{ByType: map[string]int64{}, ByProducer: map[string]int64{}, ByStatus: map[string]int64{}}
	byEvent := map[feed.URN]int64{}
	prog := progress{w: stderr}
	var readErr error
	for {
		fr, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		prog.tick(r.Frames())
		s.Frames++
		if s.First.IsZero() || fr.At.Before(s.First) {
			s.First = fr.At
		}
		if fr.At.After(s.Last) {
			s.Last = fr.At
		}
		if fr.Kind == recording.APIResponse {
			s.Responses++
			s.ByStatus[strconv.Itoa(fr.Status)]++
			continue
		}
		s.Deliveries++
		key, kerr := feed.ParseRoutingKey(fr.RoutingKey)
		if kerr != nil {
			s.ByType["(bad routing key)"]++
			continue
		}
		s.ByType[key.Type.String()]++
		if p, err := feed.Peek(fr.Body); err == nil && p.Producer != 0 {
			s.ByProducer[strconv.Itoa(p.Producer)]++
		}
		if !key.Event.IsZero() {
			byEvent[key.Event]++
		}
		if !only.IsZero() && key.Event == only {
			if err := printMessage(stdout, fr, key, *asJSON); err != nil {
				return err
			}
		}
	}
	if readErr != nil {
		s.Torn = readErr.Error()
	}
	if only.IsZero() {
		s.Events = len(byEvent)
		for u, n := range byEvent {
			s.TopEvents = append(s.TopEvents, eventCount{u.String(), n})
		}
		slices.SortFunc(s.TopEvents, func(a, b eventCount) int {
			return cmp.Or(cmp.Compare(b.Messages, a.Messages), cmp.Compare(a.Event, b.Event))
		})
		s.TopEvents = s.TopEvents[:min(10, len(s.TopEvents))]
		if err := printSummary(stdout, &s, *asJSON); err != nil {
			return err
		}
	}
	return readErr
}

// printMessage prints one delivery of the event asked for: its time, type and decoded
// message (or why it does not decode).
func printMessage(w io.Writer, fr recording.Frame, key feed.RoutingKey, asJSON bool) error {
	m, derr := feed.Decode(key.Type, fr.Body)
	if asJSON {
		line := struct {
			At      time.Time    `json:"at"`
			Type    string       `json:"type"`
			Message feed.Message `json:"message,omitempty"`
			Error   string       `json:"error,omitempty"`
		}{At: fr.At, Type: key.Type.String(), Message: m}
		if derr != nil {
			line.Error, line.Message = derr.Error(), nil
		}
		return json.NewEncoder(w).Encode(line)
	}
	if derr != nil {
		_, err := fmt.Fprintf(w, "%s  %-24s  does not decode: %v\n", fr.At.Format(time.RFC3339Nano), key.Type, derr)
		return err
	}
	_, err := fmt.Fprintf(w, "%s  %-24s  %+v\n", fr.At.Format(time.RFC3339Nano), key.Type, m)
	return err
}

func printSummary(w io.Writer, s *summary, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	fmt.Fprintf(w, "frames        %d (%d deliveries, %d API responses)\n", s.Frames, s.Deliveries, s.Responses)
	if s.Frames > 0 {
		fmt.Fprintf(w, "from          %s\nto            %s (%s)\n", s.First.Format(time.RFC3339Nano), s.Last.Format(time.RFC3339Nano), s.Last.Sub(s.First))
	}
	section := func(title string, m map[string]int64) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintln(w, title)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "  %-26s %d\n", k, m[k])
		}
	}
	section("by type", s.ByType)
	section("by producer", s.ByProducer)
	section("API responses by status", s.ByStatus)
	fmt.Fprintf(w, "events        %d\n", s.Events)
	for _, e := range s.TopEvents {
		fmt.Fprintf(w, "  %-26s %d\n", e.Event, e.Messages)
	}
	if s.Torn != "" {
		fmt.Fprintf(w, "torn          %s\n", s.Torn)
	}
	return nil
}
