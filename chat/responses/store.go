package responses

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

// Record is a stored response.
type Record struct {
	ProjectID  string
	ID         string
	PreviousID string
	// Response is the Response as it was answered.
	Response json.RawMessage
	// Input is the request's input items, with their ids.
	Input []InputItem
	// CallID and TraceID name the call that traced the response.
	CallID, TraceID string
	CreatedBy       string
	CreatedAt       time.Time
}

type responseRow struct {
	bun.BaseModel `bun:"table:stored_responses"`

	ProjectID  string         `bun:"project_id,pk"`
	ID         string         `bun:"id,pk"`
	PreviousID sql.NullString `bun:"previous_id"`
	Response   string         `bun:"response"`
	InputItems string         `bun:"input_items"`
	CallID     sql.NullString `bun:"call_id"`
	TraceID    sql.NullString `bun:"trace_id"`
	CreatedBy  sql.NullString `bun:"created_by"`
	CreatedAt  time.Time      `bun:"created_at"`
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// Store keeps responses per project, in the database the server opened.
// Every method takes the caller's project: a response of another project
// is not found, as one that does not exist.
type Store struct {
	db *weft.DB
}

// NewStore returns the store of db (migrated: the stored_responses table).
func NewStore(db *weft.DB) *Store { return &Store{db: db} }

// Put stores a response; it is durable when Put returns nil. Putting an id
// again replaces the record.
func (s *Store) Put(ctx context.Context, rec *Record) error {
	input, err := json.Marshal(rec.Input)
	if err != nil {
		return err
	}
	row := &responseRow{
		ProjectID: rec.ProjectID, ID: rec.ID, PreviousID: nullString(rec.PreviousID),
		Response: string(rec.Response), InputItems: string(input), CallID: nullString(rec.CallID),
		TraceID: nullString(rec.TraceID), CreatedBy: nullString(rec.CreatedBy), CreatedAt: rec.CreatedAt.UTC(),
	}
	_, err = s.db.NewInsert().Model(row).
		On("CONFLICT (project_id, id) DO UPDATE").
		Set("response = EXCLUDED.response, input_items = EXCLUDED.input_items, call_id = EXCLUDED.call_id, trace_id = EXCLUDED.trace_id").
		Exec(ctx)
	return err
}

// Get returns the response id of the project; ErrNotFound when it has none.
func (s *Store) Get(ctx context.Context, projectID, id string) (*Record, error) {
	var row responseRow
	err := s.db.NewSelect().Model(&row).Where("project_id = ? AND id = ?", projectID, id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.WithFields(ErrNotFound, map[string]any{"param": "response_id"}, "Response with id '%s' not found.", id)
	}
	if err != nil {
		return nil, err
	}
	rec := &Record{
		ProjectID: row.ProjectID, ID: row.ID, PreviousID: row.PreviousID.String, Response: json.RawMessage(row.Response),
		CallID: row.CallID.String, TraceID: row.TraceID.String, CreatedBy: row.CreatedBy.String, CreatedAt: row.CreatedAt,
	}
	if err := json.Unmarshal([]byte(row.InputItems), &rec.Input); err != nil {
		return nil, err
	}
	return rec, nil
}

// Delete removes the response id of the project; ErrNotFound when it has
// none. Responses that name it as their previous one keep their own items.
func (s *Store) Delete(ctx context.Context, projectID, id string) error {
	res, err := s.db.NewDelete().Model((*responseRow)(nil)).Where("project_id = ? AND id = ?", projectID, id).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return weft.WithFields(ErrNotFound, map[string]any{"param": "response_id"}, "Response with id '%s' not found.", id)
	}
	return nil
}

// Conversation is what a previous_response_id continues.
type Conversation struct {
	// Items are the input and output items of every response of the
	// chain, oldest first.
	Items []InputItem
	// Previous is the record of the response continued.
	Previous *Record
	// First is the id of the chain's first response: the conversation's
	// thread, whose turns are its responses' calls.
	First string
}

// History returns the conversation that response id ends. A chain that
// reaches back more than maxDepth responses, or holds more than maxItems
// items, is ErrInvalid; a response of the chain that is gone (deleted) is
// ErrNotFound.
func (s *Store) History(ctx context.Context, projectID, id string, maxDepth, maxItems int) (*Conversation, error) {
	var chain [][]InputItem
	conv := &Conversation{}
	total := 0
	for at, depth := id, 0; at != ""; depth++ {
		if depth == maxDepth {
			return nil, invalid("previous_response_id", "The chain of previous responses is longer than %d.", maxDepth)
		}
		rec, err := s.Get(ctx, projectID, at)
		if err != nil {
			return nil, err
		}
		if conv.Previous == nil {
			conv.Previous = rec
		}
		var resp struct {
			Output []InputItem `json:"output"`
		}
		if err := json.Unmarshal(rec.Response, &resp); err != nil {
			return nil, err
		}
		items := append(slices.Clip(rec.Input), resp.Output...)
		if total += len(items); total > maxItems {
			return nil, invalid("previous_response_id", "The conversation holds more than %d items.", maxItems)
		}
		chain = append(chain, items)
		conv.First, at = rec.ID, rec.PreviousID
	}
	for i := len(chain) - 1; i >= 0; i-- {
		conv.Items = append(conv.Items, chain[i]...)
	}
	return conv, nil
}

// Input-item listing bounds, as OpenAI's.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// InputItems lists the input items of response id: limit items (1 to
// 100; 0 means 20) after the item named after (none: from the start), in
// order "asc" or "desc" (the default).
func (s *Store) InputItems(ctx context.Context, projectID, id, after string, limit int, order string) (*ItemList, error) {
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 1 || limit > MaxListLimit:
		return nil, invalid("limit", "Invalid 'limit': must be between 1 and %d.", MaxListLimit)
	}
	rec, err := s.Get(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	items := rec.Input
	switch order {
	case "", "desc":
		items = slices.Clone(items)
		slices.Reverse(items)
	case "asc":
	default:
		return nil, invalid("order", "Invalid value for 'order': '%s'. Supported values are: 'asc' and 'desc'.", order)
	}
	if after != "" {
		i := slices.IndexFunc(items, func(it InputItem) bool { return it.ID == after })
		if i < 0 {
			return nil, invalid("after", "No input item with id '%s' in response '%s'.", after, id)
		}
		items = items[i+1:]
	}
	list := &ItemList{Object: "list", Data: []json.RawMessage{}, HasMore: len(items) > limit}
	for _, it := range items[:min(limit, len(items))] {
		data, err := json.Marshal(listed(it))
		if err != nil {
			return nil, err
		}
		list.Data = append(list.Data, data)
	}
	if n := len(list.Data); n > 0 {
		first, last := items[0].ID, items[n-1].ID
		list.FirstID, list.LastID = &first, &last
	}
	return list, nil
}

// listed is an input item as input_items shows it: a message's string
// content as one input_text part (output_text for the assistant), with a
// status.
func listed(it InputItem) InputItem {
	if it.Type == "message" {
		var text string
		if json.Unmarshal(it.Content, &text) == nil {
			kind := "input_text"
			if it.Role == "assistant" {
				kind = "output_text"
			}
			it.Content, _ = json.Marshal([]TextPart{{Type: kind, Text: text}})
		}
	}
	if it.Status == "" && it.Type != "reasoning" {
		it.Status = "completed"
	}
	return it
}
