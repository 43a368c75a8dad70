// Package recording keeps what the feed delivered, and what the API answered, in an
// append-only file that can be read back: the exact messages that led to a settlement,
// to run again through your own listeners as often as needed.
//
// A recording is a sequence of Frames (a delivery: its routing key, body, session and
// receipt time; or an API response: its URL, status and body). A Writer gathers frames
// into blocks, compresses each with zstd and writes it with a checksum; a Reader reads
// them back in order. A crash loses at most the block being written: a Reader of a torn
// file returns every whole block's frames, then a *TornError that says where it stopped
// and why, so that what was recorded before the crash is never lost with it.
//
// To record a live SDK, give a Writer's RecordDelivery to feedkit.Config.OnDelivery,
// which sees every message as a session received it, and its RecordResponse to the API
// client's OnResponse, which sees every answer.
//
// To play a recording through your own listeners, give a Player to the SDK as its
// transport (feedkit.Config.Transport), with recoveries disabled, open the SDK and Play:
// every recorded delivery goes to every session whose bindings match it, in the
// recorded order, so the listeners are called as they were, every time.
//
// A Dir records into a directory, a new file by size or age; its files read one after
// the other are one recording (OpenFiles), as are any recordings concatenated.
//
// # The file
//
// A recording starts with a header naming the format and its version; a file of another
// kind is refused at once with ErrNotRecording. Each block is a frame count, the
// compressed and the raw lengths, a CRC-32C of the compressed bytes, and the bytes.
// Blocks are independent: a reader may start at any block boundary.
package recording
