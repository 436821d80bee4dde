package datasets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// Defaults of [Config]; the server's flags use them too.
const (
	// DefaultMaxRows is how many calls one dataset may be made of.
	DefaultMaxRows = 10_000
	// DefaultMaxBytes is how large the rows of one dataset may be together,
	// in bytes of JSON: what one request holds in memory.
	DefaultMaxBytes = 64 << 20
)

// Errors of the datasets domain. The HTTP adapter maps each by its class.
var (
	// ErrInvalidSelection: a selection that names no dataset, asks for more
	// rows than the server makes, or selects no call (400).
	ErrInvalidSelection = weft.DefineError(weft.ErrInvalid, "InvalidSelection", "invalid selection")
	// ErrSelectionTooLarge: the selected calls' rows are larger than
	// Config.MaxBytes (413).
	ErrSelectionTooLarge = weft.DefineError(weft.ErrTooLarge, "SelectionTooLarge", "selection too large")
)

// Service makes datasets of calls. The caller (weft.PrincipalFrom(ctx))
// has been authorized to write in the request's project; every call read
// is of that project.
type Service interface {
	// FromCalls publishes a version of the Dataset object Name whose rows
	// are the selected calls', in the selection's order (started_at
	// ascending by default).
	FromCalls(ctx context.Context, req FromCallsReq) (*FromCallsRes, error)
}

// CallReader reads the selected calls. *trace.Store is one.
type CallReader interface {
	CallsQuery(ctx context.Context, req *trace.CallsQueryReq, yield func(*trace.Call) error) error
}

// DatasetWriter publishes a dataset version. *objects.Store is one.
type DatasetWriter interface {
	DatasetCreate(ctx context.Context, req *objects.DatasetCreateReq) (*objects.V2CreateRes, error)
}

// Config configures [New].
type Config struct {
	// Calls and Datasets are the services read and written. Required.
	Calls    CallReader
	Datasets DatasetWriter
	Limits
}

// Limits bound what one request makes.
type Limits struct {
	// MaxRows bounds the calls of one dataset; a larger limit is refused.
	// Defaults to [DefaultMaxRows].
	MaxRows int
	// MaxBytes bounds the JSON of one dataset's rows together: what the
	// request holds in memory. Defaults to [DefaultMaxBytes].
	MaxBytes int
}

// FromCallsReq selects the calls of a dataset, in the calls query's form.
type FromCallsReq struct {
	ProjectID string `json:"-"`
	// Name is the dataset's name, and so its object id.
	Name        string  `json:"name" minLength:"1" maxLength:"128"`
	Description *string `json:"description,omitempty"`
	// Filter, Query and SortBy select and order the calls as the calls
	// query does.
	Filter trace.CallsFilter `json:"filter,omitzero"`
	Query  json.RawMessage   `json:"query,omitempty"`
	SortBy []trace.SortBy    `json:"sort_by,omitempty"`
	// Limit is the most calls taken; 0 is the server's most (MaxRows).
	Limit int `json:"limit,omitempty" minimum:"0"`
}

// FromCallsRes names the dataset version made.
type FromCallsRes struct {
	// Ref is the version's ref, weave:///<entity>/<project>/object/<name>:<digest>.
	Ref          string `json:"ref"`
	ObjectID     string `json:"object_id"`
	Digest       string `json:"digest"`
	VersionIndex int    `json:"version_index"`
	// Rows is how many calls the dataset holds.
	Rows int `json:"rows"`
}

// Builder makes datasets of calls.
type Builder struct {
	cfg Config
}

var _ Service = (*Builder)(nil)

// New returns a Builder over cfg's services.
func New(cfg Config) (*Builder, error) {
	switch {
	case cfg.Calls == nil || cfg.Datasets == nil:
		return nil, errors.New("datasets: Config.Calls and Config.Datasets are required")
	case cfg.MaxRows < 0 || cfg.MaxBytes < 0:
		return nil, errors.New("datasets: Config limits must not be negative")
	}
	if cfg.MaxRows == 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	return &Builder{cfg: cfg}, nil
}

// callColumns are the members of a call a row is made of.
var callColumns = []string{"inputs", "output"}

// FromCalls implements Service.
func (b *Builder) FromCalls(ctx context.Context, req FromCallsReq) (*FromCallsRes, error) {
	if req.Name == "" {
		return nil, weft.Errorf(ErrInvalidSelection, "a dataset needs a name")
	}
	limit := req.Limit
	switch {
	case limit == 0:
		limit = b.cfg.MaxRows
	case limit < 0 || limit > b.cfg.MaxRows:
		return nil, weft.Errorf(ErrInvalidSelection, "limit must be from 1 to %d, the most calls this server makes a dataset of", b.cfg.MaxRows)
	}
	var rows []json.RawMessage
	size := 0
	err := b.cfg.Calls.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: req.ProjectID, Filter: req.Filter, Query: req.Query,
		SortBy: req.SortBy, Limit: limit, Columns: callColumns}, func(c *trace.Call) error {
		row, err := Row(c)
		if err != nil {
			return err
		}
		if size += len(row); size > b.cfg.MaxBytes {
			return weft.Errorf(ErrSelectionTooLarge, "the selected calls are larger than %d bytes, the most this server makes a dataset of: select fewer", b.cfg.MaxBytes)
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, weft.Errorf(ErrInvalidSelection, "the selection holds no call")
	}
	res, err := b.cfg.Datasets.DatasetCreate(ctx, &objects.DatasetCreateReq{ProjectID: req.ProjectID, Name: req.Name,
		Description: req.Description, Rows: rows})
	if err != nil {
		return nil, err
	}
	return &FromCallsRes{Ref: ref.Object(req.ProjectID, res.ObjectID, res.Digest).WithScheme(ref.SchemeWeave).String(),
		ObjectID: res.ObjectID, Digest: res.Digest, VersionIndex: res.VersionIndex, Rows: len(rows)}, nil
}

// Row is the dataset row of a call: the members of its inputs (inputs that
// are not an object under "inputs"), and its output under "output" (an
// input named output gives way to it).
func Row(c *trace.Call) (json.RawMessage, error) {
	row := map[string]json.RawMessage{}
	inputs := bytes.TrimSpace(c.Inputs)
	if len(inputs) > 0 && inputs[0] == '{' {
		if err := json.Unmarshal(inputs, &row); err != nil {
			return nil, err
		}
	} else if len(inputs) > 0 && !bytes.Equal(inputs, []byte("null")) {
		row["inputs"] = inputs
	}
	row["output"] = orNull(c.Output)
	return json.Marshal(row)
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
