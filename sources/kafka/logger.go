package kafka

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoLogger bridges franz-go's logger to slog, one level down: franz-go's
// Info is chatty (every metadata refresh), so it logs at slog Debug, and its
// Debug below that.
type kgoLogger struct{ l *slog.Logger }

const slogTrace = slog.LevelDebug - 4

func (k kgoLogger) Level() kgo.LogLevel {
	ctx := context.Background()
	switch {
	case k.l.Enabled(ctx, slogTrace):
		return kgo.LogLevelDebug
	case k.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelInfo
	case k.l.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	case k.l.Enabled(ctx, slog.LevelError):
		return kgo.LogLevelError
	}
	return kgo.LogLevelNone
}

func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	l := slog.LevelError
	switch level {
	case kgo.LogLevelDebug:
		l = slogTrace
	case kgo.LogLevelInfo:
		l = slog.LevelDebug
	case kgo.LogLevelWarn:
		l = slog.LevelWarn
	}
	k.l.Log(context.Background(), l, "kafka: "+msg, keyvals...)
}
