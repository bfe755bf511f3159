package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
)

// Checkpointer is implemented by a metadata store that can write a
// backup of the node to a directory (persistence.Meta: a consistent
// online copy of the embedded store, with the rows and progress of the
// embedded tables, the node's id and a manifest).
type Checkpointer interface {
	Checkpoint(dir string) (files int, bytes int64, err error)
}

// backup answers a BackupRequest from a goroutine: a checkpoint takes a
// while on a large store and must not hold up the manager's mailbox.
func (m *manager) backup(ctx actor.Context, req *api.BackupRequest) {
	if ctx.Sender() == nil {
		return
	}
	cp, ok := m.deps.Meta.(Checkpointer)
	if !ok {
		ctx.Respond(&api.BackupResponse{Error: precondition("this node's metadata store cannot be backed up online")})
		return
	}
	if req.GetDir() == "" {
		ctx.Respond(&api.BackupResponse{Error: invalid("dir", "dir is required").GetError()})
		return
	}
	log := m.log()
	runTo(m.life, ctx.Sender(), "backup", func(context.Context) *api.BackupResponse {
		files, bytes, err := cp.Checkpoint(req.GetDir())
		if err != nil {
			log.Warn("backup failed", "dir", req.GetDir(), "err", err)
			return &api.BackupResponse{Error: &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Field: "dir", Message: api.Clip(err.Error(), api.MaxMessageBytes)}}
		}
		log.Info("backup written", "dir", req.GetDir(), "files", files, "bytes", bytes)
		return &api.BackupResponse{Dir: req.GetDir(), Files: int32(files), Bytes: bytes}
	}, func(err error) *api.BackupResponse {
		return &api.BackupResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: fmt.Sprint(err)}}
	})
}
