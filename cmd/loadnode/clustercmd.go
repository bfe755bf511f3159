package main

import (
	"context"
	"fmt"
	"time"
)

type clusterStatusCmd struct{ conn connFlags }

// clusterCommands are the cluster group's rows of the command table.
var clusterCommands = []subcommand{
	{group: "cluster", name: "status", about: "print the cluster's members, leader, jobs per member and lease ages",
		note: "cluster mode: members, leader, jobs per member, lease ages",
		bind: bind(func(c *clusterStatusCmd, _ *flagSet) *connFlags { return &c.conn }, nil)},
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
