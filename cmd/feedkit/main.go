// Command feedkit works with recordings of the feed (package feed/recording): what is
// in one, a part of one, and one played again through the SDK.
//
//	feedkit inspect [-event URN] [-json] FILE   counts by type, producer and event, the time
//	                                            range; with -event, that event's messages
//	feedkit cut -o OUT [-from T] [-to T] [-event URN]... FILE
//	                                            a time range or some events into a new file
//	feedkit replay [-speed N] [-event URN]... FILE
//	                                            the recording through the SDK, printing
//	                                            each listener call
//	feedkit sim -amqp URL [-http ADDR] [-rate N] [-messages N]
//	                                            the simulator as its own process: its feed
//	                                            into RabbitMQ, its API over HTTP
//	feedkit record -o FILE (-amqp URL -api URL -token T [-for D] | -sim N)
//	                                            what an SDK receives, into a recording
//
// FILE is a recording's file, or a directory of recording.Dir's files read as one.
// Times are RFC 3339. A torn recording is read to its last whole block, and the command
// says where it stopped; a file that is not a recording is refused. Install it with
// go install github.com/feedkit/feedkit/cmd/feedkit@latest.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a command line the command cannot take: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

const usage = `usage: feedkit <command> [flags] FILE
commands:
  inspect   what a recording holds: counts by type, producer and event; one event's messages
  cut       a time range or some events of a recording into a new one
  replay    a recording through the SDK, printing each listener call
  sim       the simulator as its own process: its feed into RabbitMQ, its API over HTTP
  record    what an SDK receives from a feed (or an in-process simulator) into a recording
run "feedkit <command> -h" for a command's flags`

// run runs the command line args and returns the exit status: 0, 1 when the work
// failed, 2 for a command line it cannot take.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "inspect":
		err = inspect(args[1:], stdout, stderr)
	case "cut":
		err = cut(args[1:], stdout, stderr)
	case "replay":
		err = replay(ctx, args[1:], stdout, stderr)
	case "sim":
		err = sim(ctx, args[1:], stdout, stderr)
	case "record":
		err = record(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0
	default:
		err = &usageError{fmt.Sprintf("feedkit: unknown command %q\n%s", args[0], usage)}
	}
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, ue.msg)
		return 2
	default:
		fmt.Fprintln(stderr, "feedkit:", err)
		return 1
	}
}
