package testnode

import (
	"bytes"
	"strings"
	"sync"
)

// LogRing keeps the last lines written to it, for failure reports. It is an
// io.Writer safe for concurrent use.
type LogRing struct {
	mu    sync.Mutex
	lines []string
	max   int
	part  bytes.Buffer // a line not yet ended
}

// NewLogRing returns a ring of the last max lines.
func NewLogRing(max int) *LogRing { return &LogRing{max: max} }

func (r *LogRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.part.Write(p)
	for {
		line, err := r.part.ReadString('\n')
		if err != nil {
			r.part.Reset()
			r.part.WriteString(line)
			break
		}
		r.lines = append(r.lines, strings.TrimRight(line, "\n"))
		if len(r.lines) > r.max {
			r.lines = r.lines[len(r.lines)-r.max:]
		}
	}
	return len(p), nil
}

// Tail returns the last n lines (and a line not yet ended).
func (r *LogRing) Tail(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	from := max(len(r.lines)-n, 0)
	out := strings.Join(r.lines[from:], "\n")
	if r.part.Len() > 0 {
		out += "\n" + r.part.String()
	}
	return out
}

// String returns every line kept.
func (r *LogRing) String() string { return r.Tail(r.max) }
