package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// sliceFrames sends its frames, then ends with err (nil: the answer's end).
type sliceFrames struct {
	frames []string
	err    error
	closed bool
}

func (f *sliceFrames) Stream(sink FrameSink) error {
	for _, frame := range f.frames {
		if err := sink(json.RawMessage(frame)); err != nil {
			return err
		}
	}
	return f.err
}

func (f *sliceFrames) Close() error { f.closed = true; return nil }

// A backend's frames are relayed as data events, each flushed, then [DONE];
// a stream that breaks off gets an error event first, and the frames are
// collected for the trace either way.
func TestRelayFrames(t *testing.T) {
	var out bytes.Buffer
	flushes := 0
	frames, failure := relayFrames(&out, func() error { flushes++; return nil }, &sliceFrames{frames: []string{`{"a":1}`, `{"b":2}`}})
	if want := "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n"; out.String() != want || failure != "" || len(frames) != 2 || flushes != 3 {
		t.Fatalf("relayed %q (failure %q, %d frames, %d flushes)", out.String(), failure, len(frames), flushes)
	}
	out.Reset()
	frames, failure = relayFrames(&out, func() error { return nil }, &sliceFrames{frames: []string{`{"a":1}`}, err: errors.New("reset")})
	if !strings.Contains(failure, "reset") || len(frames) != 1 || !strings.Contains(out.String(), `"code":500`) || !strings.HasSuffix(out.String(), "data: [DONE]\n\n") {
		t.Fatalf("broken stream relayed %q (failure %q, %d frames)", out.String(), failure, len(frames))
	}
}
