package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
)

const jobUsage = `job COMMAND

Commands:
  create -f SPEC.yaml           create a job from a spec file ("-" reads stdin)
  list [--sort KEY] [--desc] [--filter TEXT] [--limit N]
                                list jobs (by name; or sorted by KEY, filtered, on the node)
  show NAME [-o text|json|yaml] show a job's state, history, progress, statistics
  pause NAME                    pause a job
  resume NAME                   resume a paused job
  stop NAME                     stop a job for good
  alter NAME [-f SPEC.yaml] [--offset P=OFFSET ...]  change limits/properties; reset offsets while PAUSED
  delete NAME                   delete a STOPPED or CANCELLED job (the table stays)`

type (
	jobCreateCmd struct {
		conn connFlags
		file string
	}
	// jobListCmd lists every job by name; with sort, desc, filter or
	// limit it asks the node for a sorted, filtered listing.
	jobListCmd struct {
		conn   connFlags
		sort   string
		desc   bool
		filter string
		limit  int
	}
	jobShowCmd struct {
		conn   connFlags
		name   string
		output string
	}
	// jobActionCmd is pause, resume and stop.
	jobActionCmd struct {
		conn   connFlags
		action string
		name   string
	}
)

func (m *Main) parseJob(args []string) (command, error) {
	if len(args) == 0 {
		return nil, usagef("job: missing command (create, list, show, pause, resume, stop)")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help":
		fmt.Fprintf(m.Stdout, "Usage: loadnode %s\n", jobUsage)
		return nil, errHelp
	case "create":
		c := jobCreateCmd{}
		fs := m.newFlagSet("job create", "job create -f SPEC.yaml [--addr HOST:PORT] [--timeout D]")
		fs.StringVar(&c.file, "f", "", "job spec `FILE` (YAML; - reads stdin)")
		m.addConnFlags(fs, &c.conn)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return nil, err
		}
		if err := exactArgs(fs, pos); err != nil {
			return nil, err
		}
		if c.file == "" {
			return nil, usagef("job create: -f SPEC.yaml is required")
		}
		return c, c.conn.validate(fs)
	case "alter":
		return m.parseJobAlter(args)
	case "list":
		c := jobListCmd{}
		fs := m.newFlagSet("job list", "job list [--sort KEY] [--desc] [--filter TEXT] [--limit N] [--addr HOST:PORT] [--timeout D]")
		fs.StringVar(&c.sort, "sort", "", "sort by `KEY`: "+strings.Join(api.ListSortKeys, ", ")+" (default name)")
		fs.BoolVar(&c.desc, "desc", false, "sort descending")
		fs.StringVar(&c.filter, "filter", "", "only jobs whose name, state, reason, health, sink, table, source or message holds `TEXT` (any case)")
		fs.IntVar(&c.limit, "limit", 0, "print at most `N` jobs (0: every job)")
		m.addConnFlags(fs, &c.conn)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return nil, err
		}
		if err := exactArgs(fs, pos); err != nil {
			return nil, err
		}
		if err := api.ValidListSort(c.sort); err != nil {
			return nil, usagef("job list: --%v", err)
		}
		if c.limit < 0 {
			return nil, usagef("job list: --limit %d must be >= 0", c.limit)
		}
		if len(c.filter) > api.MaxListFilter {
			return nil, usagef("job list: --filter of %d bytes: at most %d", len(c.filter), api.MaxListFilter)
		}
		return c, c.conn.validate(fs)
	case "show":
		c := jobShowCmd{}
		fs := m.newFlagSet("job show", "job show NAME [-o text|json|yaml] [--addr HOST:PORT] [--timeout D]")
		fs.StringVar(&c.output, "o", "text", "output `format`: text, json or yaml")
		m.addConnFlags(fs, &c.conn)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return nil, err
		}
		if err := exactArgs(fs, pos, "NAME"); err != nil {
			return nil, err
		}
		c.name = pos[0]
		switch c.output {
		case "text", "json", "yaml":
		default:
			return nil, usagef("job show: -o %q must be text, json or yaml", c.output)
		}
		return c, c.conn.validate(fs)
	case "pause", "resume", "stop", "delete":
		c := jobActionCmd{action: sub}
		fs := m.newFlagSet("job "+sub, "job "+sub+" NAME [--addr HOST:PORT] [--timeout D]")
		m.addConnFlags(fs, &c.conn)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return nil, err
		}
		if err := exactArgs(fs, pos, "NAME"); err != nil {
			return nil, err
		}
		c.name = pos[0]
		return c, c.conn.validate(fs)
	}
	return nil, usagef("job: unknown command %q", sub)
}

// readSpec reads and checks a spec file for the command cmd ("job
// create", "job alter") before anything is sent, so that a mistake is
// reported with its line.
func readSpec(cmd, path string, stdin io.Reader) (*api.JobSpec, error) {
	var (
		data []byte
		err  error
	)
	if path == "-" {
		data, err = io.ReadAll(stdin)
		path = "stdin"
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	spec, err := config.ParseJobSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", cmd, path, err)
	}
	return spec, nil
}

func (c jobCreateCmd) run(ctx context.Context, m *Main) error {
	spec, err := readSpec("job create", c.file, m.Stdin)
	if err != nil {
		return err
	}
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	info, err := cl.CreateJob(ctx, spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "created job %s (id %d)\n", info.GetSummary().GetName(), info.GetSummary().GetId())
	return nil
}

func (c jobListCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	if c.sort == "" && !c.desc && c.filter == "" && c.limit == 0 {
		jobs, err := cl.ListJobs(ctx)
		if err != nil {
			return err
		}
		return printJobList(m.Stdout, jobs)
	}
	// Sorted and filtered on the node, read page by page by offset (a job
	// whose figures move meanwhile can be seen twice or not at all).
	q := client.ListQuery{Sort: c.sort, Descending: c.desc, Filter: c.filter, Limit: api.MaxListPage}
	if q.Sort == "" {
		q.Sort = "name"
	}
	var jobs []*api.JobSummary
	for {
		if c.limit > 0 {
			q.Limit = min(api.MaxListPage, c.limit-len(jobs))
		}
		page, matched, err := cl.ListJobsQuery(ctx, q)
		if err != nil {
			return err
		}
		jobs = append(jobs, page...)
		q.Offset += len(page)
		if len(page) == 0 || int64(q.Offset) >= matched || (c.limit > 0 && len(jobs) >= c.limit) {
			break
		}
	}
	return printJobList(m.Stdout, jobs)
}

func (c jobShowCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	info, err := cl.ShowJob(ctx, c.name)
	if err != nil {
		return err
	}
	switch c.output {
	case "json":
		return printJobJSON(m.Stdout, info)
	case "yaml":
		return printJobYAML(m.Stdout, info)
	}
	return printJobText(m.Stdout, info)
}

func (c jobActionCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	var info *api.JobInfo
	switch c.action {
	case "pause":
		info, err = cl.PauseJob(ctx, c.name)
	case "resume":
		info, err = cl.ResumeJob(ctx, c.name)
	case "stop":
		info, err = cl.StopJob(ctx, c.name)
	case "delete":
		if _, err := cl.DeleteJob(ctx, c.name); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "job %s deleted (its table stays)\n", c.name)
		return nil
	default:
		return fmt.Errorf("job: unknown action %q", c.action)
	}
	if err != nil {
		return err
	}
	s := info.GetSummary()
	fmt.Fprintf(m.Stdout, "job %s: %s\n", s.GetName(), stateText(s))
	return nil
}

// stateText is "PAUSED (USER_PAUSE: paused by user)".
func stateText(s *api.JobSummary) string {
	var b strings.Builder
	b.WriteString(s.GetState().String())
	if s.GetReason() != api.Reason_REASON_UNSPECIFIED || s.GetReasonMessage() != "" {
		b.WriteString(" (")
		b.WriteString(s.GetReason().String())
		if msg := s.GetReasonMessage(); msg != "" && msg != strings.ToLower(s.GetReason().String()) {
			b.WriteString(": ")
			b.WriteString(msg)
		}
		b.WriteString(")")
	}
	return b.String()
}
