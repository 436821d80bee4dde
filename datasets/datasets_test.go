package datasets_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/datasets"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// calls yields n calls of one row each, about 40 bytes.
type calls struct {
	n    int
	seen *trace.CallsQueryReq
}

func (c *calls) CallsQuery(_ context.Context, req *trace.CallsQueryReq, yield func(*trace.Call) error) error {
	c.seen = req
	for i := range min(c.n, req.Limit) {
		if err := yield(&trace.Call{ID: fmt.Sprint(i), Inputs: json.RawMessage(fmt.Sprintf(`{"q":%d}`, i)), Output: json.RawMessage(`"answer"`)}); err != nil {
			return err
		}
	}
	return nil
}

type writer struct{ rows []json.RawMessage }

func (w *writer) DatasetCreate(_ context.Context, req *objects.DatasetCreateReq) (*objects.V2CreateRes, error) {
	w.rows = req.Rows
	return &objects.V2CreateRes{ObjectID: req.Name, Digest: "d"}, nil
}

// What one request makes is bounded: the calls by Limits.MaxRows (a larger
// limit is refused, none takes the most), the rows' bytes by
// Limits.MaxBytes (413 past it, nothing published).
func TestFromCallsLimits(t *testing.T) {
	ctx := context.Background()
	src, dst := &calls{n: 100}, &writer{}
	b, err := datasets.New(datasets.Config{Calls: src, Datasets: dst, Limits: datasets.Limits{MaxRows: 10, MaxBytes: 200}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.FromCalls(ctx, datasets.FromCallsReq{ProjectID: "a/p", Name: "x", Limit: 11})
	if !errors.Is(err, datasets.ErrInvalidSelection) || !errors.Is(err, weft.ErrInvalid) {
		t.Fatalf("a limit past MaxRows: %v", err)
	}
	res, err := b.FromCalls(ctx, datasets.FromCallsReq{ProjectID: "a/p", Name: "x", Limit: 3})
	if err != nil || res.Rows != 3 || res.Ref != "weave:///a/p/object/x:d" || string(dst.rows[2]) != `{"output":"answer","q":2}` {
		t.Fatalf("%+v %v, rows %s", res, err, dst.rows)
	}
	dst.rows = nil
	_, err = b.FromCalls(ctx, datasets.FromCallsReq{ProjectID: "a/p", Name: "x"})
	if src.seen.Limit != 10 || !errors.Is(err, datasets.ErrSelectionTooLarge) || !errors.Is(err, weft.ErrTooLarge) || dst.rows != nil {
		t.Fatalf("no limit read %d calls; 10 rows past 200 bytes: %v, published %d rows", src.seen.Limit, err, len(dst.rows))
	}
}

// A call becomes its inputs' members and its output; inputs that are not
// an object are kept whole.
func TestRow(t *testing.T) {
	for _, c := range []struct{ inputs, output, want string }{
		{`{"messages":[{"role":"user","content":"hi"}],"output":"shadowed"}`, `"hello"`, `{"messages":[{"role":"user","content":"hi"}],"output":"hello"}`},
		{`[1,2]`, `3`, `{"inputs":[1,2],"output":3}`},
		{``, ``, `{"output":null}`},
	} {
		got, err := datasets.Row(&trace.Call{Inputs: json.RawMessage(c.inputs), Output: json.RawMessage(c.output)})
		if err != nil || string(got) != c.want {
			t.Errorf("inputs %s output %s: %s %v, want %s", c.inputs, c.output, got, err, c.want)
		}
	}
}
