package main

import (
	"context"
	"fmt"
	"time"
)

const clusterUsage = `cluster COMMAND

Commands:
  status    print the cluster's members, leader, jobs per member and lease ages`

type clusterStatusCmd struct{ conn connFlags }

func (m *Main) parseCluster(args []string) (command, error) {
	if len(args) == 0 {
		return nil, usagef("cluster: missing command (status)")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help":
		fmt.Fprintf(m.Stdout, "Usage: loadnode %s\n", clusterUsage)
		return nil, errHelp
	case "status":
		c := clusterStatusCmd{}
		fs := m.newFlagSet("cluster status", "cluster status [--addr HOST:PORT] [--timeout D]")
		m.addConnFlags(fs, &c.conn)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return nil, err
		}
		if err := exactArgs(fs, pos); err != nil {
			return nil, err
		}
		return c, c.conn.validate(fs)
	}
	return nil, usagef("cluster: unknown command %q", sub)
}

func (c clusterStatusCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	st, err := cl.ClusterStatus(ctx)
	if err != nil {
		return err
	}
	leader := st.GetLeader()
	if leader == "" {
		leader = "(none)"
	}
	fmt.Fprintf(m.Stdout, "Answered by: %s\nLeader: %s\nJobs: %d assigned, %d unassigned, %d on members that are gone\n",
		cell(st.GetSelf()), cell(leader), st.GetAssigned(), st.GetUnassigned(), st.GetOrphaned())
	tw := newTable(m.Stdout)
	fmt.Fprintln(tw, "MEMBER\tADDR\tJOBS\tLEASE LEFT\tLEASE TTL\tJOINED")
	for _, ms := range st.GetMembers() {
		mark := ""
		if ms.GetName() == st.GetLeader() {
			mark = " *"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%d\t%s\t%s\t%s\n", cell(ms.GetName()), mark, cell(ms.GetAddr()), ms.GetJobs(),
			time.Duration(ms.GetLeaseTtlMs())*time.Millisecond, time.Duration(ms.GetLeaseGrantedMs())*time.Millisecond, msTime(ms.GetSinceUnixMs()))
	}
	return tw.Flush()
}
