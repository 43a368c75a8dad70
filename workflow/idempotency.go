package workflow

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxIdempotencyKeyLen is the longest StartRequest.IdempotencyKey, in bytes: room for
// any id a caller composes, and well within what a database index entry holds.
const MaxIdempotencyKeyLen = 512

// ErrKeyReused is returned, wrapped, by Start for a request whose IdempotencyKey a
// process of its type holds already, created by a request with another CustomID or
// Start: two different pieces of work given one key, which is a bug of the caller's
// keys, not a retry.
var ErrKeyReused = errors.New("workflow: idempotency key reused with other arguments")

// checkKey refuses a key a store could not keep as text, or keep in an index.
func checkKey(key string) error {
	switch {
	case len(key) > MaxIdempotencyKeyLen:
		return fmt.Errorf("workflow: StartRequest.IdempotencyKey is %d bytes, more than %d", len(key), MaxIdempotencyKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("workflow: StartRequest.IdempotencyKey %q is not valid UTF-8", key)
	case strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("workflow: StartRequest.IdempotencyKey %q holds a NUL byte", key)
	}
	return nil
}

// digest returns the hex SHA-256 of what a retry of req must repeat: its CustomID and
// Start, each length-prefixed so that no two requests share an encoding. Type is not in
// it, being the key's scope. A field added to StartRequest later joins only when it is
// not zero, so that the digests of the processes already stored stay valid.
func (req StartRequest) digest() string {
	var b []byte
	for _, f := range []string{req.CustomID, req.Start.ActorType, string(req.Start.Args)} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// resume begins p, found by its key, if its start broke off before its graph was
// created: the starter whose start broke off is the likeliest to start the key again,
// and need not wait for the recovery service's idle timeout. begin tolerates having
// been done, so a start racing with it, or the recovery service, does no harm. A failure
// is reported, not returned: the process exists, and the recovery service completes it.
func (e *Engine) resume(ctx context.Context, p Process) {
	if p.State != ProcessRunning {
		return
	}
	_, err := e.store.Graph(ctx, p.ID)
	if errors.Is(err, ErrNotFound) {
		var created bool
		if created, err = e.begin(ctx, p); created {
			e.repaired(p.Type, RepairProcessBegun)
		}
	}
	if err != nil {
		e.report(fmt.Errorf("workflow: process %s of key %q: its start left to recovery: %w", p.ID, p.IdempotencyKey, err))
	}
}
