package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/trace/callquery"
)

// Monitors runs the monitors of every project: it is the trace store's
// write hook (a call that ends in a project with an active monitor queues
// a dispatch job in the same transaction), the objects store's change hook
// (a Monitor object is checked when published and its newest version kept
// in the monitors table), and the workers of the jobs that score. Give
// it to trace.Config.Hook and objects.Config.Hook.
type Monitors struct {
	db  *weft.DB
	cfg Config

	scorers scorerCache
	limits  limiters
}

var (
	_ trace.WriteHook    = (*Monitors)(nil)
	_ objects.ChangeHook = (*Monitors)(nil)
)

// New returns the monitors of cfg.DB and registers their workers on
// cfg.Jobs, which must not have been used yet.
func New(cfg Config) (*Monitors, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	m := &Monitors{db: cfg.DB, cfg: cfg}
	m.cfg.setPrices()
	m.scorers.init()
	m.limits.init(cfg.JudgeConcurrency, cfg.JudgeRate)
	if err := m.register(); err != nil {
		return nil, err
	}
	return m, nil
}

// SetServices sets Config.Calls, Objects and Feedback, for a process whose
// stores take the Monitors as their hook and so are built after it. Call it
// before any store is used.
func (m *Monitors) SetServices(calls CallReader, objs ObjectReader, fb FeedbackWriter) {
	m.cfg.Calls, m.cfg.Objects, m.cfg.Feedback = calls, objs, fb
	m.cfg.setPrices()
}

// SetChat sets Config.Chat and Config.Models, for a process whose chat
// service is built after the stores. Call it before any store is used.
func (m *Monitors) SetChat(c Completer, models ModelAccess) {
	m.cfg.Chat, m.cfg.Models = c, models
}

func (m *Monitors) now() time.Time { return m.cfg.Now().UTC() }

// monitorRow is a row of the monitors table: the newest live version of a
// Monitor object.
type monitorRow struct {
	bun.BaseModel `bun:"table:monitors,alias:m"`

	ProjectID   string     `bun:"project_id,pk"`
	ObjectID    string     `bun:"object_id,pk"`
	Digest      string     `bun:"digest,notnull"`
	Active      bool       `bun:"active,notnull"`
	ActiveSince *time.Time `bun:"active_since"`
	Spec        string     `bun:"spec,notnull"`
	PublishedBy *string    `bun:"published_by"`
	UpdatedAt   time.Time  `bun:"updated_at,notnull"`
}

// monitor reads the row's spec.
func (r *monitorRow) monitor() (*Monitor, error) {
	var m Monitor
	if err := json.Unmarshal([]byte(r.Spec), &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Classes implements objects.ChangeHook: monitors watch Monitor objects.
func (m *Monitors) Classes() []string { return []string{Class} }

// CheckPublish implements objects.ChangeHook: a Monitor that cannot run is
// refused — a malformed value, a scorer that is not a published scorer of
// the same project or that cannot run, a judge model its publisher (the
// caller) may not use.
func (m *Monitors) CheckPublish(ctx context.Context, projectID, _ string, val json.RawMessage) error {
	mon, err := ParseMonitor(projectID, val)
	if err != nil {
		return err
	}
	if err := m.checkQuery(ctx, mon); err != nil {
		return err
	}
	for _, r := range mon.Scorers {
		s, err := m.scorer(ctx, projectID, r)
		if err != nil {
			return err
		}
		if s.Judge != nil && m.cfg.Models != nil {
			if err := m.cfg.Models.CheckModel(ctx, s.Judge.Model); err != nil {
				return weft.Errorf(ErrJudgeModel, "judge %s names model %q, which the monitor's publisher may not use: %v", s.Name, s.Judge.Model, err)
			}
		}
	}
	return nil
}

// checkQuery refuses a call filter query that the calls query would refuse:
// it runs it once, over no call.
func (m *Monitors) checkQuery(ctx context.Context, mon *Monitor) error {
	if mon.Query == nil {
		return nil
	}
	if _, err := callquery.Parse(mon.Query); err != nil {
		return weft.Errorf(ErrInvalidMonitor, "call_filter.query: %v", err)
	}
	err := m.cfg.Calls.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: mon.ProjectID, Query: mon.Query, Limit: 1,
		Columns: []string{"id"}, Filter: trace.CallsFilter{CallIDs: []string{noCall}}}, func(*trace.Call) error { return nil })
	if errors.Is(err, weft.ErrInvalid) {
		return weft.Errorf(ErrInvalidMonitor, "call_filter.query: %v", err)
	}
	return err
}

// noCall is a call id no call has.
const noCall = "00000000-0000-0000-0000-000000000000"

// ObjectChanged implements objects.ChangeHook: the monitors table follows
// the version of each Monitor object published last — the newest one, or
// an earlier one published again (a monitor paused and resumed with the
// value it had runs again) — and, after a delete, the newest live one. A
// monitor that turns active is active from now: calls that ended before are
// left to a backfill.
func (m *Monitors) ObjectChanged(ctx context.Context, tx bun.Tx, change objects.ObjectChange) error {
	if change.Published != nil {
		change.Latest = change.Published
	}
	if change.Latest == nil {
		_, err := tx.NewDelete().Model((*monitorRow)(nil)).
			Where("project_id = ? AND object_id = ?", change.ProjectID, change.ObjectID).Exec(ctx)
		return err
	}
	mon, err := ParseMonitor(change.ProjectID, change.Latest.Val)
	if err != nil {
		// A version stored before it could be checked (or by a client
		// that skipped the check) runs nothing.
		mon = &Monitor{ProjectID: change.ProjectID}
	}
	mon.ObjectID, mon.Digest = change.ObjectID, change.Latest.Digest
	if change.Latest.PfUserID != nil {
		mon.PublishedBy = *change.Latest.PfUserID
	}
	spec, err := json.Marshal(mon)
	if err != nil {
		return err
	}
	var prev monitorRow
	err = tx.NewSelect().Model(&prev).Where("project_id = ? AND object_id = ?", change.ProjectID, change.ObjectID).Scan(ctx)
	if err != nil && !isNoRows(err) {
		return err
	}
	row := &monitorRow{ProjectID: change.ProjectID, ObjectID: change.ObjectID, Digest: change.Latest.Digest, Active: mon.Active,
		Spec: string(spec), PublishedBy: change.Latest.PfUserID, UpdatedAt: m.now()}
	switch {
	case !mon.Active:
	case prev.Active && prev.ActiveSince != nil:
		row.ActiveSince = prev.ActiveSince
	default:
		now := m.now()
		row.ActiveSince = &now
	}
	_, err = tx.NewInsert().Model(row).On("CONFLICT (project_id, object_id) DO UPDATE").
		Set("digest = EXCLUDED.digest").Set("active = EXCLUDED.active").Set("active_since = EXCLUDED.active_since").
		Set("spec = EXCLUDED.spec").Set("published_by = EXCLUDED.published_by").Set("updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	return err
}

// activeMonitors returns the active monitors of projectID; with objectID,
// that monitor whether it is active or not (a backfill's).
func (m *Monitors) activeMonitors(ctx context.Context, projectID, objectID string) ([]monitorRow, error) {
	var rows []monitorRow
	q := m.db.NewSelect().Model(&rows).Where("project_id = ?", projectID)
	if objectID != "" {
		q = q.Where("object_id = ?", objectID)
	} else {
		q = q.Where("active")
	}
	err := q.OrderExpr("object_id").Scan(ctx)
	return rows, err
}

// CallsWritten implements trace.WriteHook: when the calls' project has an
// active monitor, one dispatch job for them is queued in the write's
// transaction. A project without one costs the write one indexed lookup.
func (m *Monitors) CallsWritten(ctx context.Context, tx trace.WriteTx, calls []trace.WrittenCall) error {
	byProject := map[string][]string{}
	var order []string
	for _, c := range calls {
		if byProject[c.ProjectID] == nil {
			order = append(order, c.ProjectID)
		}
		byProject[c.ProjectID] = append(byProject[c.ProjectID], c.ID)
	}
	at := m.now()
	for _, projectID := range order {
		exists := m.db.NewSelect().Model((*monitorRow)(nil)).ColumnExpr("1").
			Where("project_id = ? AND active", projectID).Limit(1)
		var active bool
		if err := jobs.Tx(tx).QueryRow(ctx, "SELECT EXISTS ("+exists.String()+")", &active); err != nil {
			return err
		}
		if !active {
			continue
		}
		if err := m.cfg.Jobs.InsertTx(ctx, jobs.Tx(tx), m.dispatchJob(dispatchArgs{ProjectID: projectID, CallIDs: byProject[projectID], At: at})); err != nil {
			return err
		}
	}
	return nil
}

// scorerCache keeps scorers read by ref: a version never changes.
type scorerCache struct {
	mu sync.Mutex
	m  map[string]*Scorer
}

// maxCachedScorers bounds the cache; past it, it starts over.
const maxCachedScorers = 1024

func (c *scorerCache) init() { c.m = map[string]*Scorer{} }

func (c *scorerCache) get(key string) *Scorer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

func (c *scorerCache) put(key string, s *Scorer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedScorers {
		clear(c.m)
	}
	c.m[key] = s
}
