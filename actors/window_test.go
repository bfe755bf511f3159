package actors

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

func TestWindowExceeded(t *testing.T) {
	for _, tt := range []struct {
		maxErrors   int64
		ratio       *float64
		rows, errs  int64
		wantExceeds bool
	}{
		{0, nil, 10, 0, false},
		{0, nil, 10, 1, true},
		{5, nil, 10, 5, false}, // ratio unset: 1, no limit
		{5, nil, 10, 10, true}, // over max_error_number
		{100, proto.Float64(0.5), 10, 5, false},
		{100, proto.Float64(0.5), 10, 6, true},
		{100, proto.Float64(0), 10, 1, true},
		{100, proto.Float64(1), 10, 10, false},
	} {
		spec := &api.JobSpec{MaxErrorNumber: tt.maxErrors, MaxFilterRatio: tt.ratio}
		if got := windowExceeded(spec, tt.rows, tt.errs); got != tt.wantExceeds {
			t.Errorf("max_error_number %d ratio %v: %d of %d rows: exceeded = %v", tt.maxErrors, tt.ratio, tt.errs, tt.rows, got)
		}
	}
}
