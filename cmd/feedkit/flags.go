package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/recording"
)

// newFlags makes a command's flag set, which reports its errors to the caller.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("feedkit "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args and returns the one file they name.
func parse(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", &usageError{""}
		}
		return "", &usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return "", &usageError{fmt.Sprintf("%s: want one recording file, got %d arguments", fs.Name(), fs.NArg())}
	}
	return fs.Arg(0), nil
}

// events is a repeatable -event flag.
type events []feed.URN

func (e *events) String() string {
	var s []string
	for _, u := range *e {
		s = append(s, u.String())
	}
	return strings.Join(s, ",")
}

func (e *events) Set(v string) error {
	u, err := feed.ParseURN(v)
	if err != nil {
		return err
	}
	*e = append(*e, u)
	return nil
}

// timeFlag is an RFC 3339 time flag; zero when not given.
type timeFlag struct{ t time.Time }

func (f *timeFlag) String() string {
	if f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339Nano)
}

func (f *timeFlag) Set(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time such as 2026-11-29T12:00:00Z")
	}
	f.t = t
	return nil
}

// source opens a recording: a file, or a directory of a recording.Dir's files, read as
// one.
func source(path string) (io.ReadCloser, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return os.Open(path)
	}
	files, err := recording.Files(path)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no recording files (feed-*.rec) in the directory", path)
	}
	return recording.OpenFiles(files)
}

// open opens a recording for reading.
func open(path string) (io.Closer, *recording.Reader, error) {
	f, err := source(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := recording.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, r, nil
}

// progress prints, at most once a second, how far a long read has got.
type progress struct {
	w    io.Writer
	last time.Time
}

func (p *progress) tick(frames int64) {
	if now := time.Now(); now.Sub(p.last) >= time.Second {
		if !p.last.IsZero() {
			fmt.Fprintf(p.w, "... %d frames read\n", frames)
		}
		p.last = now
	}
}
