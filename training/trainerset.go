package training

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// TrainerSet is a [Trainer] that runs each job with the trainer configured for
// its model's base model, so that one process can train the models it serves
// itself and hand others to an outside program. Used as [Config.Trainer], it
// also decides at job creation whether this process can run a job at all: a
// job no trainer of the set runs fails at once (see [Config.OtherWorkers]).
//
// The zero TrainerSet runs nothing: every job given to it fails at once.
type TrainerSet struct {
	mu       sync.RWMutex // Add may run while jobs are routed
	routes   []trainerRoute
	fallback *trainerRoute
}

type trainerRoute struct {
	name       string
	trainer    Trainer
	baseModels []string
}

// Add routes the jobs of the given base models to t; with no base models, t
// runs every base model no other entry names (there is one such entry at
// most; a later one replaces it). name says which trainer it is in messages.
func (s *TrainerSet) Add(name string, t Trainer, baseModels ...string) {
	r := trainerRoute{name: name, trainer: t, baseModels: slices.Clone(baseModels)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(baseModels) == 0 {
		s.fallback = &r
		return
	}
	s.routes = append(s.routes, r)
}

// For returns the trainer of a base model: the first entry that names it,
// else the entry for every other base model, else nil.
func (s *TrainerSet) For(baseModel string) Trainer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.routes {
		if slices.Contains(r.baseModels, baseModel) {
			return r.trainer
		}
	}
	if s.fallback != nil {
		return s.fallback.trainer
	}
	return nil
}

// Runs reports whether some trainer of the set runs baseModel.
func (s *TrainerSet) Runs(baseModel string) bool { return s.For(baseModel) != nil }

// Train runs the job with its base model's trainer; a job none runs fails
// with [ErrNoTrainer] (not retried).
func (s *TrainerSet) Train(ctx context.Context, job *TrainJob, report Reporter) (*TrainResult, error) {
	t := s.For(job.BaseModel)
	if t == nil {
		return nil, s.noTrainer(job.BaseModel)
	}
	return t.Train(ctx, job, report)
}

// noTrainer is the error (and training_failed message) for a base model the
// set does not run: it says what the set does run.
func (s *TrainerSet) noTrainer(baseModel string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var runs []string
	for _, r := range s.routes {
		runs = append(runs, fmt.Sprintf("%s trains %s", r.name, strings.Join(quoteAll(r.baseModels), ", ")))
	}
	what := "no trainer is configured"
	if len(runs) > 0 {
		what = strings.Join(runs, "; ")
	}
	return &dataError{msg: fmt.Sprintf("no trainer of this server runs base model %q (%s)", baseModel, what), kind: ErrNoTrainer}
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// baseModelRunner is a Trainer that knows in advance which base models it
// runs ([TrainerSet]); any other Trainer runs every base model.
type baseModelRunner interface {
	Trainer
	Runs(baseModel string) bool
	noTrainer(baseModel string) error
}

// unrunnable returns, when this process's trainer is a set that does not run
// baseModel and no other process may, the error that fails such a job at once;
// nil when the job can be run (here or, with OtherWorkers or no trainer at
// all, by workers elsewhere).
func (s *Store) unrunnable(baseModel string) error {
	set, ok := s.cfg.Trainer.(baseModelRunner)
	if !ok || s.cfg.OtherWorkers || set.Runs(baseModel) {
		return nil
	}
	return set.noTrainer(baseModel)
}
