package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/recording"
)

// cut writes the frames of a time range, or of some events, into a new recording.
func cut(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cut", stderr)
	out := fs.String("o", "", "the new recording's file (required; not overwritten)")
	var from, to timeFlag
	fs.Var(&from, "from", "keep frames received at or after this time (RFC 3339)")
	fs.Var(&to, "to", "keep frames received before this time (RFC 3339)")
	var only events
	fs.Var(&only, "event", "keep this event's messages (repeatable), with the system messages and API responses")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return &usageError{"cut: -o, the new recording's file, is required"}
	}
	in, r, err := open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	dst, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w, err := recording.NewWriter(dst, recording.WriterOptions{})
	if err != nil {
		dst.Close()
		return err
	}
	prog := progress{w: stderr}
	var readErr error
	kept := int64(0)
	for {
		fr, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		prog.tick(r.Frames())
		if !from.t.IsZero() && fr.At.Before(from.t) || !to.t.IsZero() && !fr.At.Before(to.t) {
			continue
		}
		if len(only) > 0 && fr.Kind == recording.Delivery {
			key, err := feed.ParseRoutingKey(fr.RoutingKey)
			if err != nil || !key.Type.IsSystem() && !slices.Contains(only, key.Event) {
				continue
			}
		}
		if err := w.Append(fr); err != nil {
			dst.Close()
			return err
		}
		kept++
	}
	if err := w.Close(); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d of %d frames into %s\n", kept, r.Frames(), *out)
	if readErr != nil {
		return fmt.Errorf("%s: %w (the frames before it were cut)", path, readErr)
	}
	return nil
}
