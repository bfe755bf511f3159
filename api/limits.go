package api

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on the text a node stores and shows. A record, a spec or a source
// error can carry any number of bytes; what a node keeps about it and echoes
// back is cut to these, so that `job show`, SHOW ROUTINE LOAD and
// /v1/jobs/NAME stay small whatever the records were (docs/limits.md).
const (
	// MaxReasonBytes bounds the reason of a stored error row.
	MaxReasonBytes = 512
	// MaxMessageBytes bounds a journaled transition's message, a job's
	// state message and the message of an error answered to a client.
	MaxMessageBytes = 1024
	// MaxEchoBytes bounds a user-given name or value quoted in an error
	// message ("job \"...\" not found").
	MaxEchoBytes = 128

	// MaxRequestBytes bounds one request a client sends a node (a
	// statement, a spec): gRPC's 4 MiB message limit on the node, less room
	// for protoactor's envelope. The client refuses a larger request before
	// sending it.
	MaxRequestBytes = 4<<20 - 64<<10
	// MaxScanPageBytes bounds the rows of one table scan answer: a page
	// ends at the first row that takes it past this (a page has at least
	// one row, and a row is at most max_record_size).
	MaxScanPageBytes = 4 << 20
)

// clipMarkMax is the longest marker Clip appends: "…[+4294967295 bytes]".
const clipMarkMax = len("…[+") + 20 + len(" bytes]")

// Clip returns s if it is at most n bytes long, and otherwise its first
// bytes, cut at a rune boundary, followed by a marker saying how many bytes
// were cut ("…[+10485743 bytes]"), in at most n bytes in all. Invalid UTF-8
// is replaced (protobuf strings must be valid UTF-8), so the result can
// always be marshalled.
func Clip(s string, n int) string {
	if len(s) <= n {
		if utf8.ValidString(s) {
			return s
		}
		s = strings.ToValidUTF8(s, "\uFFFD")
		if len(s) <= n {
			return s
		}
	}
	if n <= clipMarkMax {
		return cutRunes(strings.ToValidUTF8(s[:min(len(s), n+utf8.UTFMax)], "\uFFFD"), n)
	}
	head := cutRunes(strings.ToValidUTF8(s[:n], "\uFFFD"), n-clipMarkMax)
	return head + "…[+" + strconv.Itoa(len(s)-len(head)) + " bytes]"
}

// cutRunes returns the longest prefix of s (valid UTF-8) of at most n bytes
// that ends at a rune boundary.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Quote is strconv.Quote of s clipped to MaxEchoBytes: the form in which an
// error message echoes a user-given name.
func Quote(s string) string {
	return strconv.Quote(Clip(s, MaxEchoBytes))
}
