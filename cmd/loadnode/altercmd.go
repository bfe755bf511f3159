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

func (m *Main) parseJobAlter(args []string) (command, error) {
	c := jobAlterCmd{offsets: offsetFlags{}, positions: positionFlags{}}
	fs := m.newFlagSet("job alter", `job alter NAME [-f SPEC.yaml] [--offset PARTITION=OFFSET ...] [--addr HOST:PORT] [--timeout D]

Changes a job. -f gives the whole new spec (edit what "job show NAME -o yaml"
prints): only desired_concurrent_number, max_batch_interval, max_batch_rows,
max_batch_size, max_error_number, kafka.properties and kafka.default_offset
may change. --offset moves a partition's progress to a number,
OFFSET_BEGINNING or OFFSET_END; it needs the job PAUSED and is journaled
with the old and new positions. --position does the same for a Kinesis job's
shard (by shard id) with TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339> or a
sequence number to read after.`)
	fs.StringVar(&c.file, "f", "", "new job spec `FILE` (YAML; - reads stdin)")
	fs.Var(c.offsets, "offset", "reset a partition's progress: `PARTITION=OFFSET` (repeatable)")
	fs.Var(c.positions, "position", "reset a Kinesis shard's position: `SHARD=POSITION` (repeatable)")
	m.addConnFlags(fs, &c.conn)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if err := exactArgs(fs, pos, "NAME"); err != nil {
		return nil, err
	}
	c.name = pos[0]
	if c.file == "" && len(c.offsets) == 0 && len(c.positions) == 0 {
		return nil, usagef("job alter: give -f SPEC.yaml and/or --offset PARTITION=OFFSET or --position SHARD=POSITION")
	}
	if len(c.offsets) > 0 && len(c.positions) > 0 {
		return nil, usagef("job alter: --offset is for Kafka jobs, --position for Kinesis jobs; not both")
	}
	return c, c.conn.validate(fs)
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
