package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
)

// jobAlterCmd is `loadnode job alter NAME [-f SPEC.yaml] [--offset P=OFFSET ...]`.
type jobAlterCmd struct {
	conn    connFlags
	name    string
	file    string
	offsets offsetFlags
	// positions are Kinesis shard positions by shard id.
	positions positionFlags
}

// positionFlags collects repeated --position SHARD=POSITION flags.
type positionFlags map[string]string

func (o positionFlags) String() string { return fmt.Sprint(map[string]string(o)) }

func (o positionFlags) Set(v string) error {
	s, pos, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(s) == "" || strings.TrimSpace(pos) == "" {
		return fmt.Errorf("%q: want SHARD=POSITION", v)
	}
	o[strings.TrimSpace(s)] = strings.TrimSpace(pos)
	return nil
}

// offsetFlags collects repeated --offset PARTITION=OFFSET flags.
type offsetFlags map[int32]string

func (o offsetFlags) String() string { return fmt.Sprint(map[int32]string(o)) }

func (o offsetFlags) Set(v string) error {
	p, off, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want PARTITION=OFFSET", v)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
	if err != nil || n < 0 {
		return fmt.Errorf("%q: partition must be a number >= 0", v)
	}
	o[int32(n)] = strings.TrimSpace(off)
	return nil
}

// jobAlterCommand is the row of `job alter` in the command table.
var jobAlterCommand = subcommand{group: "job", name: "alter", args: []string{"NAME"},
	usage: "NAME [-f SPEC.yaml] [--offset PARTITION=OFFSET ...]",
	about: "change limits/properties; reset offsets while PAUSED",
	more: `Changes a job. -f gives the whole new spec (edit what "job show NAME -o yaml"
prints): only desired_concurrent_number, max_batch_interval, max_batch_rows,
max_batch_size, max_error_number, kafka.properties and kafka.default_offset
may change. --offset moves a partition's progress to a number,
OFFSET_BEGINNING or OFFSET_END; it needs the job PAUSED and is journaled
with the old and new positions. --position does the same for a Kinesis job's
shard (by shard id) with TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339> or a
sequence number to read after.`,
	bind: bind(func(c *jobAlterCmd, fs *flagSet) *connFlags {
		c.offsets, c.positions = offsetFlags{}, positionFlags{}
		fs.StringVar(&c.file, "f", "", "new job spec `FILE` (YAML; - reads stdin)")
		fs.Var(c.offsets, "offset", "reset a partition's progress: `PARTITION=OFFSET` (repeatable)")
		fs.Var(c.positions, "position", "reset a Kinesis shard's position: `SHARD=POSITION` (repeatable)")
		return &c.conn
	}, func(_ *Main, c *jobAlterCmd, pos []string) error {
		c.name = pos[0]
		if c.file == "" && len(c.offsets) == 0 && len(c.positions) == 0 {
			return usagef("job alter: give -f SPEC.yaml and/or --offset PARTITION=OFFSET or --position SHARD=POSITION")
		}
		if len(c.offsets) > 0 && len(c.positions) > 0 {
			return usagef("job alter: --offset is for Kafka jobs, --position for Kinesis jobs; not both")
		}
		return nil
	}),
}

func (c jobAlterCmd) run(ctx context.Context, m *Main) error {
	var spec *api.JobSpec
	if c.file != "" {
		var err error
		if spec, err = readSpec("job alter", c.file, m.Stdin); err != nil {
			return err
		}
	}
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	var info *api.JobInfo
	if len(c.positions) > 0 {
		info, err = cl.ResetPositions(ctx, c.name, spec, c.positions)
	} else {
		info, err = cl.AlterJob(ctx, c.name, spec, c.offsets)
	}
	if err != nil {
		return err
	}
	s := info.GetSummary()
	fmt.Fprintf(m.Stdout, "job %s: %s\n", s.GetName(), stateText(s))
	return nil
}
