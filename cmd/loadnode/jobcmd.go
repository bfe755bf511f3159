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

// jobCommands are the job group's rows of the command table.
var jobCommands = []subcommand{
	{group: "job", name: "create", usage: "-f SPEC.yaml", about: `create a job from a spec file ("-" reads stdin)`,
		bind: bind(func(c *jobCreateCmd, fs *flagSet) *connFlags {
			fs.StringVar(&c.file, "f", "", "job spec `FILE` (YAML; - reads stdin)")
			return &c.conn
		}, func(_ *Main, c *jobCreateCmd, _ []string) error {
			if c.file == "" {
				return usagef("job create: -f SPEC.yaml is required")
			}
			return nil
		})},
	{group: "job", name: "list", usage: "[--sort KEY] [--desc] [--filter TEXT] [--limit N]",
		about: "list jobs (by name; or sorted by KEY, filtered, on the node)",
		bind: bind(func(c *jobListCmd, fs *flagSet) *connFlags {
			fs.StringVar(&c.sort, "sort", "", "sort by `KEY`: "+strings.Join(api.ListSortKeys, ", ")+" (default name)")
			fs.BoolVar(&c.desc, "desc", false, "sort descending")
			fs.StringVar(&c.filter, "filter", "", "only jobs whose name, state, reason, health, sink, table, source or message holds `TEXT` (any case)")
			fs.IntVar(&c.limit, "limit", 0, "print at most `N` jobs (0: every job)")
			return &c.conn
		}, func(_ *Main, c *jobListCmd, _ []string) error {
			if err := api.ValidListSort(c.sort); err != nil {
				return usagef("job list: --%v", err)
			}
			if c.limit < 0 {
				return usagef("job list: --limit %d must be >= 0", c.limit)
			}
			if len(c.filter) > api.MaxListFilter {
				return usagef("job list: --filter of %d bytes: at most %d", len(c.filter), api.MaxListFilter)
			}
			return nil
		})},
	{group: "job", name: "show", args: []string{"NAME"}, usage: "NAME [-o text|json|yaml]",
		about: "show a job's state, history, progress, statistics",
		bind: bind(func(c *jobShowCmd, fs *flagSet) *connFlags {
			fs.StringVar(&c.output, "o", "text", "output `format`: text, json or yaml")
			return &c.conn
		}, func(_ *Main, c *jobShowCmd, pos []string) error {
			c.name = pos[0]
			switch c.output {
			case "text", "json", "yaml":
				return nil
			}
			return usagef("job show: -o %q must be text, json or yaml", c.output)
		})},
	jobAction("pause", "pause a job", ""),
	jobAction("resume", "resume a paused job", ""),
	jobAction("stop", "stop a job for good", ""),
	jobAlterCommand,
	jobAction("delete", "delete a STOPPED or CANCELLED job (the table stays)", "a STOPPED or CANCELLED job; its table stays"),
}

// jobAction is the row of `job pause|resume|stop|delete NAME`.
func jobAction(action, about, note string) subcommand {
	return subcommand{group: "job", name: action, args: []string{"NAME"}, usage: "NAME", about: about, note: note,
		bind: bind(func(c *jobActionCmd, _ *flagSet) *connFlags {
			c.action = action
			return &c.conn
		}, func(_ *Main, c *jobActionCmd, pos []string) error {
			c.name = pos[0]
			return nil
		})}
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
