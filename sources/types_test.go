package sources

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestErrorsAs(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"out of range", &OutOfRangeError{Partition: 3, Offset: 7, LogStart: 10, LogEnd: 20},
			"sources: partition 3: offset 7 is out of range [10, 20]"},
		{"config with field", &ConfigError{Field: "kafka.topic", Err: errors.New("unknown topic")},
			"sources: configuration: kafka.topic: unknown topic"},
		{"config", &ConfigError{Err: errors.New("bad")}, "sources: configuration: bad"},
		{"unreachable", &UnreachableError{Err: io.EOF}, "sources: unreachable: EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrapped := fmt.Errorf("task: %w", tt.err)
			if got := tt.err.Error(); got != tt.want {
				t.Fatalf("Error() = %q, want %q", got, tt.want)
			}
			var oor *OutOfRangeError
			var cfg *ConfigError
			var un *UnreachableError
			n := 0
			for _, ok := range []bool{errors.As(wrapped, &oor), errors.As(wrapped, &cfg), errors.As(wrapped, &un)} {
				if ok {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%v matched %d error types, want 1", tt.err, n)
			}
		})
	}
	if !errors.Is(&UnreachableError{Err: io.EOF}, io.EOF) {
		t.Fatal("UnreachableError does not unwrap")
	}
}
