package trace

import (
	"slices"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/weftlabs/weft/internal/database"
)

// rollUp marks, after the set is written, the roots of its traces that
// another call of their trace raised: a root's status column reads as
// CallsFilter.TraceStatuses does (descendant_error, not success, when any
// visible call of its trace raised, whether or not its summary rolled the
// error up, which OpenTelemetry spans and the JS SDK do not), so that the
// dashboard's traces by status are the trace list's. The set's calls that
// may change a root are every start or end but the complete calls of a
// parent that did not raise. Per project, it reads the traces of those
// (an end alone does not carry its trace), then which of them hold a call
// that raised, each a select of listed keys that reads an index whatever
// the planner's statistics; only when some do is a root updated. query and
// exec run statement text on the set's transaction.
func (s *Store) rollUp(w *writeSet, query func(string) ([]string, error), exec func(string) error) error {
	projects, traces, err := s.rollUpTraces(w, query)
	if err != nil {
		return err
	}
	for _, projectID := range projects {
		ids := traces[projectID]
		if len(ids) == 0 {
			continue
		}
		failing, err := query(s.db.NewSelect().TableExpr("calls AS d").ColumnExpr("DISTINCT d.trace_id").
			Where("d.project_id = ? AND d.trace_id IN (?)", projectID, bun.In(ids)).
			Where("d.started_at IS NOT NULL AND d.deleted_at IS NULL AND COALESCE(d.exception, '') <> ''").String())
		if err != nil {
			return err
		}
		if len(failing) == 0 {
			continue
		}
		// A root that is a success did not raise: another call did. The
		// update takes every visible root of those traces that is running
		// or a success, and changes only the successes: under READ COMMITTED a
		// root another transaction is ending (its row still running here)
		// must be locked too, or the roll-up misses it for good. This set's
		// raising call is not visible to that transaction, so of the two:
		// either this update locks the root first, the other's upsert of it
		// waits for this commit and its roll-up, a later statement, reads
		// the raising call; or the other locks it first, this update waits
		// for its commit and re-evaluates the CASE on the row it committed.
		// The COPY path and the upserts alike write the calls before this
		// update, in the same transaction; on Citus the update, by project,
		// runs on the root's shard as one PostgreSQL statement. A root with
		// no visible row yet cannot be locked so: the trace's lock, taken
		// before the rows by a root's start and by a raising call
		// (lockRollUps), orders the two writes instead. What neither covers
		// is a raising end written before its start (no trace_id yet): the
		// start that brings its trace, written concurrently with its root's
		// first row, may still leave the root a success.
		err = exec(s.db.NewUpdate().TableExpr("calls AS c").
			Set("status = CASE WHEN c.status = ? THEN ? ELSE c.status END", StatusSuccess, StatusDescendantError).
			Where("c.project_id = ? AND c.trace_id IN (?)", projectID, bun.In(failing)).
			Where("c.parent_id IS NULL AND c.deleted_at IS NULL").
			// A root that raised or is marked already has nothing to change
			// and no race to lose, so the later writes of a trace holding an
			// error do not rewrite its row and its index entries each time.
			Where("c.status IS NULL OR c.status IN (?)", bun.In([]string{StatusRunning, StatusSuccess})).String())
		if err != nil {
			return err
		}
	}
	return nil
}

// mayChangeRoot says whether writing p may change a root's status (see
// rollUp): every start or end but the complete call of a parent that did
// not raise; a rename never does.
func (p *pending) mayChangeRoot() bool {
	r := &p.row
	raised := r.Exception != nil && *r.Exception != ""
	return (p.hasStart || p.hasEnd) && !(p.hasStart && p.hasEnd && !raised && r.ParentID != nil)
}

// ordersRollUp says whether writing p must be ordered with the other
// such writes of its trace (see lockRollUps): a root's start, which may
// be its first row, or a call that raised.
func (p *pending) ordersRollUp() bool {
	r := &p.row
	raised := r.Exception != nil && *r.Exception != ""
	return (p.hasStart && r.ParentID == nil) || (p.hasEnd && raised)
}

// rollUpKeys are, per project in the order first met, the traces of a
// set's calls that some predicate keeps (pending.mayChangeRoot,
// pending.ordersRollUp): a start's own, and an end alone's call, whose
// trace is its stored start's (an end does not carry its trace).
type rollUpKeys struct {
	projects []string
	traces   map[string][]string // sorted, distinct
	ends     map[string][]string
}

func (w *writeSet) rollUpKeys(keep func(*pending) bool) rollUpKeys {
	k := rollUpKeys{traces: map[string][]string{}, ends: map[string][]string{}}
	for _, p := range w.order {
		r := &p.row
		if !keep(p) {
			continue
		}
		if k.traces[r.ProjectID] == nil && k.ends[r.ProjectID] == nil {
			k.projects = append(k.projects, r.ProjectID)
		}
		if p.hasStart {
			k.traces[r.ProjectID] = append(k.traces[r.ProjectID], *r.TraceID)
		} else {
			k.ends[r.ProjectID] = append(k.ends[r.ProjectID], r.ID)
		}
	}
	for _, projectID := range k.projects {
		k.traces[projectID] = slices.Compact(slices.Sorted(slices.Values(k.traces[projectID])))
	}
	return k
}

// endsTraces is the select of the traces of projectID's ends' stored
// starts, as (project_id, trace_id).
func (s *Store) endsTraces(projectID string, ends []string) *bun.SelectQuery {
	return s.db.NewSelect().TableExpr("calls AS x").ColumnExpr("x.project_id, x.trace_id").
		Where("x.project_id = ? AND x.id IN (?) AND x.trace_id IS NOT NULL", projectID, bun.In(ends))
}

// rollUpTraces lists, per project in the order first met, the traces whose
// roots writing w may change, sorted: a start's own, and an end alone's as
// stored now (one whose start is not written yet has none).
func (s *Store) rollUpTraces(w *writeSet, query func(string) ([]string, error)) ([]string, map[string][]string, error) {
	k := w.rollUpKeys((*pending).mayChangeRoot)
	for _, projectID := range k.projects {
		if len(k.ends[projectID]) == 0 {
			continue
		}
		found, err := query(s.db.NewSelect().TableExpr("(?) AS t", s.endsTraces(projectID, k.ends[projectID])).ColumnExpr("t.trace_id").String())
		if err != nil {
			return nil, nil, err
		}
		k.traces[projectID] = slices.Compact(slices.Sorted(slices.Values(append(k.traces[projectID], found...))))
	}
	return k.projects, k.traces, nil
}

// lockRollUps takes, on PostgreSQL and before the set writes a row, a
// transaction-scoped advisory lock on the trace of each root start and
// each raising call of the set (pending.ordersRollUp), so that two such
// writes of one trace run their roll-ups one after the other. Without it
// a raising call and its root's first row, written at the same moment,
// each miss the other: neither row is visible to the other's roll-up, and
// the root stays a success. With it the later write waits for the
// earlier's commit, and under READ COMMITTED its statements see the
// earlier's calls. (Once the root's row is visible, the roll-up's update
// locks it, see rollUp; the other writes of a trace take no lock.) The
// locks are taken before any row, in the order of their keys, so that a
// write never waits for one while holding a row another write waits for,
// and two writes never wait for each other's locks. One statement reads
// the ends' traces and takes the locks. (SQLite needs none: its writes
// run one at a time.)
func (s *Store) lockRollUps(w *writeSet, exec func(string) error) error {
	if !s.dialect.Has(database.AdvisoryLocks) {
		return nil
	}
	k := w.rollUpKeys((*pending).ordersRollUp)
	var traces []string
	for _, projectID := range k.projects {
		if t := k.traces[projectID]; len(t) > 0 {
			traces = append(traces, s.db.NewRaw("SELECT ?::text AS project_id, unnest(?::text[]) AS trace_id", projectID, pgdialect.Array(t)).String())
		}
		if e := k.ends[projectID]; len(e) > 0 {
			traces = append(traces, s.endsTraces(projectID, e).String())
		}
	}
	if len(traces) == 0 {
		return nil
	}
	// PostgreSQL evaluates a volatile select list after the sort, so the
	// locks are taken in key order.
	return exec("SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended('trace' || chr(31) || t.project_id || chr(31) || t.trace_id, 0) AS k FROM (" +
		strings.Join(traces, " UNION ALL ") + ") AS t) AS keys ORDER BY k")
}
