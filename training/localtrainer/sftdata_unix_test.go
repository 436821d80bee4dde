//go:build unix

package localtrainer

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/weftlabs/weft/training"
)

// TestTrainSFTStopsPlanningOnCancel: a job cancelled while its data is being
// planned stops planning at the next line. The data file is a pipe that
// never ends: a trainer that read on would never return.
func TestTrainSFTStopsPlanningOnCancel(t *testing.T) {
	tr, _ := tinyTrainer(t)
	fifo := filepath.Join(t.TempDir(), "train.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writer := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			writer <- err
			return
		}
		defer w.Close()
		line := []byte(sftLines(1))
		for i := 0; ; i++ {
			if i == 200 {
				cancel()
			}
			if _, err := w.Write(line); err != nil {
				writer <- nil // the reader closed the pipe
				return
			}
		}
	}()
	job := &training.TrainJob{ID: "job-cancelled", Kind: training.KindSFT, BaseModel: "tiny", WorkDir: t.TempDir(),
		SFTDataFile: fifo, SFTConfig: json.RawMessage(`{"batch_size": 1}`)}
	rep := &events{}
	result := make(chan error, 1)
	go func() {
		_, err := tr.Train(ctx, job, rep)
		result <- err
	}()
	select {
	case err := <-result:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Train after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Train went on planning endless data after it was cancelled")
	}
	if rep.started != 0 {
		t.Fatalf("training_started(%d) reported for a cancelled job", rep.started)
	}
	if err := <-writer; err != nil {
		t.Fatal(err)
	}
}
