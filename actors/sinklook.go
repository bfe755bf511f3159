package actors

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// Status never waits on a sink (issue 25, D7). What a job's status needs
// from its sink (its newest error rows; the progress and statistics of a
// job without an actor, which a listing shows too) is read on a goroutine,
// never in a mailbox, and each show or listing waits for the read at most
// showSinkWait: then it answers with what is known, the part it could not
// read marked unavailable with the reason (JobInfo.error_rows_unavailable,
// progress_unavailable). A read that fails answers at once; one that
// hangs goes on (each sink call is bounded by the sink itself: PostgreSQL
// calls by Options.Timeout) and its answer serves the shows
// that arrived while it ran: one read per job in flight, not one per show.

// showSinkWait bounds how long a show or a listing waits for a sink read.
const showSinkWait = 3 * time.Second

// lookKey is what a live job had committed when a read of its sink began:
// a show after a newer commit does not take an older read's error rows.
type lookKey struct{ batches, errorRows int64 }

// sinkLook is one read of a job's sink for its status. done is closed once
// the results are set; they are read-only after.
type sinkLook struct {
	key      lookKey
	rows     bool // reads the error rows
	progress bool // reads the progress and statistics
	started  time.Time
	done     chan struct{}

	errorRows []*api.ErrorRow
	rowsErr   error
	prog      *sink.Progress
	progErr   error
}

func newLook(key lookKey, rows, progress bool) *sinkLook {
	return &sinkLook{key: key, rows: rows, progress: progress, started: time.Now(), done: make(chan struct{})}
}

// startLook reads job id's sink on a new goroutine.
func startLook(sk sink.Sink, id uint64, key lookKey, rows, progress bool) *sinkLook {
	lk := newLook(key, rows, progress)
	go lk.read(sk, id)
	return lk
}

// read makes lk's reads and closes lk.done; a panic of the sink is the
// read's error.
func (lk *sinkLook) read(sk sink.Sink, id uint64) {
	defer close(lk.done)
	call := func(what string, fn func() error) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = &PanicError{Where: "sink " + what, Value: r, Stack: debug.Stack()}
			}
		}()
		return fn()
	}
	if lk.progress {
		lk.progErr = call("progress", func() (err error) {
			if lk.prog, err = sk.Progress(id); err == nil && lk.prog == nil {
				err = fmt.Errorf("actors: job %d: the sink answered no progress", id)
			}
			return err
		})
	}
	if lk.rows {
		lk.rowsErr = call("error rows", func() (err error) {
			lk.errorRows, err = sk.ErrorRows(id, showErrorRows)
			return err
		})
		// Rows stored before their text was bounded (or by another sink)
		// are cut here, once for every show that shares the read.
		for i, r := range lk.errorRows {
			if len(r.GetReason()) > api.MaxReasonBytes {
				r = proto.Clone(r).(*api.ErrorRow)
				r.Reason = api.Clip(r.Reason, api.MaxReasonBytes)
				lk.errorRows[i] = r
			}
		}
	}
}

// pending reports whether lk is still reading.
func (lk *sinkLook) pending() bool {
	select {
	case <-lk.done:
		return false
	default:
		return true
	}
}

// serves reports whether a new show or listing may take lk's answer
// instead of reading again: lk is in flight, reads what is wanted and
// began at key.
func (lk *sinkLook) serves(key lookKey, rows, progress bool) bool {
	return lk != nil && lk.pending() && lk.key == key && (lk.rows || !rows) && (lk.progress || !progress)
}

// wait waits until lk has answered or until deadline fires (or ctx ends);
// it reports whether lk answered.
func (lk *sinkLook) wait(ctx context.Context, deadline <-chan time.Time) bool {
	select {
	case <-lk.done:
		return true
	case <-deadline:
	case <-ctx.Done():
	}
	return !lk.pending()
}

// unanswered is why a read that did not answer in time is unavailable.
func (lk *sinkLook) unanswered() string {
	return fmt.Sprintf("the sink did not answer within %s (reading since %s)", showSinkWait, lk.started.UTC().Format(time.RFC3339))
}

// unavailable is why a part of a read is unavailable ("" if it is not):
// its error, or no answer (answered false).
func (lk *sinkLook) unavailable(answered bool, err error) string {
	switch {
	case !answered:
		return lk.unanswered()
	case err != nil:
		return api.Clip(err.Error(), api.MaxMessageBytes)
	}
	return ""
}

// fillErrorRows sets info's error rows from lk, or says why they are
// unavailable.
func (lk *sinkLook) fillErrorRows(info *api.JobInfo, answered bool) {
	if info.ErrorRowsUnavailable = lk.unavailable(answered, lk.rowsErr); info.ErrorRowsUnavailable == "" {
		info.ErrorRows = lk.errorRows
	}
}

// answerShow waits (on a goroutine, at most showSinkWait) for lk and sends
// to the answer answer makes of it; answered is whether lk answered in
// time. The goroutine belongs to l: it ends with the incarnation, and
// then answers without waiting further.
func answerShow(l *lifetime, to *actor.PID, lk *sinkLook, answer func(answered bool) *api.JobResponse) {
	go func() {
		var resp *api.JobResponse
		defer func() {
			if r := recover(); r != nil {
				err := &PanicError{Where: "show", Value: r, Stack: debug.Stack()}
				resp = &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
			}
			l.system.Root.Send(to, resp)
		}()
		t := time.NewTimer(showSinkWait)
		defer t.Stop()
		resp = answer(lk.wait(l.ctx, t.C))
	}()
}
