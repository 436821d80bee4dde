package training_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
)

// sftTrainer records the SFT data it was given and trains one step.
type sftTrainer struct{ data atomic.Value }

func (s *sftTrainer) Train(ctx context.Context, job *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	data, err := os.ReadFile(job.SFTDataFile)
	if err != nil {
		return nil, err
	}
	s.data.Store(string(data))
	if err := report.Started(ctx, 1); err != nil {
		return nil, err
	}
	return &training.TrainResult{}, report.Step(ctx, map[string]any{"loss": 1})
}

// countingServer answers every request with body and counts them.
func countingServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	return port
}

const oneConversation = `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}` + "\n"

// TestSFTDataHosts: the server downloads SFT data only from the hosts its
// operator lists. By default a loopback URL is refused when the job is
// created; a listed name that resolves to loopback, and a redirect from a
// listed host to an unlisted one, fail the job with the policy's words — the
// same for an open port as for a closed one, nothing of what the far side
// would say — and no request reaches the unlisted service; a listed host is
// downloaded from.
func TestSFTDataHosts(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u1", DefaultEntity: "acme"})
		if err := training.MigrateQueue(db)(ctx); err != nil {
			t.Fatal(err)
		}
		secret, secretHits := countingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("SECRET internal answer")) })
		data, _ := countingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(oneConversation)) })
		redirect, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, secret.URL+"/train.jsonl", http.StatusFound)
		})
		_, secretPort, _ := net.SplitHostPort(secret.Listener.Addr().String())
		trainer := &sftTrainer{}
		// Each part has a server of its own list; the previous one stops
		// first, so that it cannot take the next part's jobs from the queue.
		var stop func()
		newStore := func(project string, hosts ...string) (*training.Store, *training.Model) {
			t.Helper()
			if stop != nil {
				stop()
			}
			blobs, err := blob.NewDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: trainer, Workers: 1, DataHosts: hosts,
				PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			stop = func() { _ = s.Stop(context.Background()) }
			t.Cleanup(stop)
			m, err := s.CreateModel(ctx, &training.CreateModelReq{Project: project, Name: "m", BaseModel: "b"})
			if err != nil {
				t.Fatal(err)
			}
			return s, m
		}
		// failure runs an SFT job from url and returns its training_failed data.
		failure := func(s *training.Store, modelID, url string) string {
			t.Helper()
			job, err := s.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: modelID, TrainingDataURL: &url})
			if err != nil {
				t.Fatalf("%s: %v", url, err)
			}
			done, events := waitEnd(t, ctx, s, job.ID)
			if done.Status != training.StatusFailed || len(events) != 1 || events[0].Type != training.EventTrainingFailed {
				t.Fatalf("%s: job %+v, events %+v; want one training_failed", url, done, events)
			}
			return string(events[0].Data)
		}
		policy := func(what, message string) {
			t.Helper()
			if !strings.Contains(message, "-training-data-hosts") || strings.Contains(message, "SECRET") || strings.Contains(message, secretPort) {
				t.Errorf("%s: %q does not name the policy alone", what, message)
			}
		}

		// No list: no URL at all, refused in the answer to the request.
		s, m := newStore("none")
		url := secret.URL + "/train.jsonl"
		_, err := s.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: m.ID, TrainingDataURL: &url})
		var field *training.FieldError
		if !errors.As(err, &field) || !errors.Is(err, weft.ErrValidation) || field.Path != "training_data_url" {
			t.Fatalf("loopback URL with no hosts listed: %v", err)
		}
		policy("no hosts listed", field.Msg)

		// A listed name that resolves to loopback: refused once resolved,
		// alike for an open and a closed port.
		s, m = newStore("name", "localhost")
		open := failure(s, m.ID, "http://localhost:"+secretPort+"/train.jsonl")
		closed := failure(s, m.ID, "http://localhost:"+closedPort(t)+"/train.jsonl")
		policy("listed name resolving to loopback", open)
		if open != closed {
			t.Errorf("an open port's failure %s differs from a closed port's %s", open, closed)
		}

		// A listed host that redirects to an unlisted one.
		s, m = newStore("redirect", redirect.Listener.Addr().String())
		policy("redirect to loopback", failure(s, m.ID, redirect.URL+"/train.jsonl"))

		if n := secretHits.Load(); n != 0 {
			t.Errorf("the unlisted service got %d requests", n)
		}

		// A listed host: the data is downloaded and trained.
		s, m = newStore("listed", data.Listener.Addr().String())
		url = data.URL + "/train.jsonl"
		job, err := s.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: m.ID, TrainingDataURL: &url})
		if err != nil {
			t.Fatal(err)
		}
		if done, events := waitEnd(t, ctx, s, job.ID); done.Status != training.StatusCompleted {
			raw, _ := json.Marshal(events)
			t.Fatalf("job from a listed host = %+v: %s", done, raw)
		}
		if got, _ := trainer.data.Load().(string); got != oneConversation {
			t.Fatalf("trainer got %q", got)
		}
	})
}
