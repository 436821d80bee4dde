package monitor

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/weftlabs/weft/objects/ref"
)

// Verdict states.
const (
	// StatePending: the verdict is still to be given (a judge's request is
	// queued or running).
	StatePending = "pending"
	// StateDone: the verdict is stored, as feedback too.
	StateDone = "done"
	// StateError: no verdict could be given; Error says why.
	StateError = "error"
)

// verdictRow is a row of monitor_verdicts: the verdict of one scorer
// version on one call, or the work still to do for it.
type verdictRow struct {
	bun.BaseModel `bun:"table:monitor_verdicts,alias:v"`

	ProjectID        string     `bun:"project_id,pk"`
	CallID           string     `bun:"call_id,pk"`
	ScorerID         string     `bun:"scorer_id,pk"`
	ScorerDigest     string     `bun:"scorer_digest,pk"`
	MonitorID        string     `bun:"monitor_id,notnull"`
	MonitorDigest    string     `bun:"monitor_digest,notnull"`
	BackfillID       *string    `bun:"backfill_id"`
	State            string     `bun:"state,notnull"`
	FeedbackID       string     `bun:"feedback_id,notnull"`
	Output           *string    `bun:"output"`
	Error            *string    `bun:"error"`
	Attempts         int        `bun:"attempts,notnull"`
	JudgeCallID      *string    `bun:"judge_call_id"`
	PromptTokens     *int64     `bun:"prompt_tokens"`
	CompletionTokens *int64     `bun:"completion_tokens"`
	Cost             *float64   `bun:"cost"`
	CreatedAt        time.Time  `bun:"created_at,notnull"`
	ScoredAt         *time.Time `bun:"scored_at"`
}

// verdictKey names a verdict: one per (call, scorer version).
type verdictKey struct {
	CallID, ScorerID, ScorerDigest string
}

func (r *verdictRow) key() verdictKey { return verdictKey{r.CallID, r.ScorerID, r.ScorerDigest} }

// feedbackNamespace derives the ids of verdicts' feedback rows.
var feedbackNamespace = uuid.MustParse("5d0b1f0e-8f4c-4b7a-9a51-5e3c6b1d2f70")

// feedbackID is the id of the feedback row of a verdict: the same for every
// attempt, so that a retry replaces what an earlier attempt wrote.
func feedbackID(projectID string, k verdictKey) string {
	return uuid.NewSHA1(feedbackNamespace, []byte(projectID+"\x00"+k.CallID+"\x00"+k.ScorerID+"\x00"+k.ScorerDigest)).String()
}

// Sampled decides, the same way every time and on every server, whether
// the monitor whose object id is monitorID samples call callID at rate: a
// SHA-256 of both, read as a number in [0, 1), below rate. A retried or
// re-sent call is sampled as it was the first time.
func Sampled(monitorID, callID string, rate float64) bool {
	if rate >= 1 {
		return true
	}
	h := sha256.Sum256([]byte(monitorID + "\x00" + callID))
	u := float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
	return u < rate
}

// existingVerdicts returns the verdict rows among keys' calls.
func (m *Monitors) existingVerdicts(ctx context.Context, projectID string, callIDs []string) (map[verdictKey]*verdictRow, error) {
	var rows []verdictRow
	err := m.db.NewSelect().Model(&rows).Column("call_id", "scorer_id", "scorer_digest", "state").
		Where("project_id = ? AND call_id IN (?)", projectID, bun.In(callIDs)).Scan(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[verdictKey]*verdictRow, len(rows))
	for i := range rows {
		out[rows[i].key()] = &rows[i]
	}
	return out, nil
}

// insertVerdicts stores rows whose key is new; existing ones stay as they
// are.
func (m *Monitors) insertVerdicts(ctx context.Context, rows []verdictRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := m.db.NewInsert().Model(&rows).On("CONFLICT (project_id, call_id, scorer_id, scorer_digest) DO NOTHING").Exec(ctx)
	return err
}

// callRef is the Weave ref of a call, as feedback names it.
func callRef(projectID, callID string) string {
	return ref.Call(projectID, callID).WithScheme(ref.SchemeWeave).String()
}

// monitorRef is the ref of a monitor version, feedback's trigger_ref.
func monitorRef(mon *Monitor) string {
	return ref.Object(mon.ProjectID, mon.ObjectID, mon.Digest).WithScheme(ref.SchemeWeave).String()
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
