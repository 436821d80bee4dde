package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/weftlabs/weft/internal/llm/kvcache"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/sample"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// scheduler is the state of the engine's loop goroutine, the only one
// that touches sequences, the KV cache and the model.
type scheduler struct {
	e           *Engine
	running     []*sequence    // in admission order
	waiting     []*sequence    // sorted by sequence.less
	waitingBy   map[string]int // waiting sequences by tenant
	queued      int            // waiting sequences whose request is not yet admitted
	preemptions int
	steps, rows int
	admissions  uint64
}

// promptRowsBytes bounds the logits a prompt-logprobs chunk asks for.
const promptRowsBytes = 64 << 20

// loop runs steps while there is work and sleeps otherwise.
func (e *Engine) loop() {
	defer close(e.loopDone)
	s := &scheduler{e: e, waitingBy: map[string]int{}}
	for {
	drain:
		for {
			select {
			case r := <-e.submit:
				s.enqueue(r)
			case <-e.quit:
				s.shutdown()
				return
			default:
				break drain
			}
		}
		s.reap(time.Now())
		s.admit()
		if len(s.running) > 0 {
			s.step()
			s.publish()
			continue
		}
		s.publish()
		// Nothing runs, so nothing waiting can be admitted until a request
		// arrives, one is cancelled or a queued one's patience runs out.
		var timeout <-chan time.Time
		var timer *time.Timer
		if d, ok := s.nextDeadline(); ok {
			timer = time.NewTimer(time.Until(d))
			timeout = timer.C
		}
		select {
		case r := <-e.submit:
			s.enqueue(r)
		case <-e.wake:
		case <-timeout:
		case <-e.quit:
			s.shutdown()
			return
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// enqueue queues a new request's first choice, or refuses it when the
// queue is full (and holds no more of another tenant's requests than of
// its own).
func (s *scheduler) enqueue(r *request) {
	if s.queued >= s.e.cfg.MaxQueued && !s.makeQueueRoom(r) {
		r.admitted <- &OverloadedError{RetryAfter: s.e.cfg.MaxQueueWait, Reason: "the admission queue is full"}
		return
	}
	seq, err := newSequence(r, 0, s.e.tok, s.e.VocabSize())
	if err != nil {
		r.admitted <- err
		return
	}
	r.seqs = make([]*sequence, r.n)
	r.seqs[0] = seq
	r.queuedAt = time.Now().UnixNano()
	s.queued++
	s.wait(seq)
}

// wait inserts seq into the waiting queue in order.
func (s *scheduler) wait(seq *sequence) {
	i, _ := slices.BinarySearchFunc(s.waiting, seq, func(a, b *sequence) int {
		if a.less(b) {
			return -1
		}
		return 1
	})
	s.waiting = slices.Insert(s.waiting, i, seq)
	s.waitingBy[seq.req.tenant]++
}

// nextDeadline is when the earliest queued request runs out of patience.
func (s *scheduler) nextDeadline() (time.Time, bool) {
	var first time.Time
	found := false
	for _, seq := range s.waiting {
		if seq.admitted {
			continue
		}
		d := time.Unix(0, seq.req.queuedAt).Add(s.e.cfg.MaxQueueWait)
		if !found || d.Before(first) {
			first, found = d, true
		}
	}
	return first, found
}

// reap drops the sequences of cancelled requests (freeing their KV blocks)
// and refuses queued requests that waited longer than MaxQueueWait.
func (s *scheduler) reap(now time.Time) {
	s.running = slices.DeleteFunc(s.running, func(seq *sequence) bool {
		if seq.req.gen.ctx.Err() == nil {
			return false
		}
		s.release(seq)
		seq.req.gen.finish(seq.req.gen.ctx.Err())
		return true
	})
	s.waiting = slices.DeleteFunc(s.waiting, func(seq *sequence) bool {
		r := seq.req
		switch {
		case r.gen.ctx.Err() != nil:
			r.gen.finish(r.gen.ctx.Err())
		case !seq.admitted && now.Sub(time.Unix(0, r.queuedAt)) >= s.e.cfg.MaxQueueWait:
			r.admitted <- &OverloadedError{RetryAfter: s.e.cfg.MaxQueueWait,
				Reason: "the KV cache budget had no room for the request within the queueing time"}
		default:
			return false
		}
		if !seq.admitted {
			s.queued--
		}
		s.unwait(seq)
		return true
	})
}

// admit moves waiting sequences into the running set while slots and KV
// blocks last: in priority order, fairly across tenants (see
// nextWaiting), preempting a tenant that runs more than its share for one
// that waits (see preemptFor). The first that does not fit otherwise stops
// admission, so a large request is not overtaken forever by smaller ones.
func (s *scheduler) admit() {
	for len(s.waiting) > 0 {
		share := s.shares()
		i := s.nextWaiting(share)
		seq := s.waiting[i]
		if len(s.running) >= s.e.cfg.MaxSeqs || !s.allocate(seq) {
			if s.preemptFor(seq, share) {
				continue
			}
			return
		}
		s.waiting = slices.Delete(s.waiting, i, i+1)
		s.unwait(seq)
		s.running = append(s.running, seq)
		if !seq.admitted {
			seq.admitted = true
			s.queued--
			s.admissions++
			seq.req.gen.admit(seq.computed, s.admissions)
			seq.req.admitted <- nil
		}
	}
}

// allocate gives seq a cache sequence: the longest cached prefix of its
// tokens under its request's salt, and fresh blocks for the rest.
func (s *scheduler) allocate(seq *sequence) bool {
	c := s.e.cache
	seq.id = model.SeqID(s.e.seqIDs.Add(1))
	attach := seq.tokens
	if seq.scorePrompt {
		attach = attach[:1] // every prompt row must be computed
	}
	cached, err := c.Attach(seq.id, seq.req.salt, attach)
	if err == nil {
		err = c.Prepare(seq.id, cached, len(seq.tokens)-cached)
	}
	if err != nil {
		c.Release(seq.id)
		return false
	}
	seq.computed = cached
	return true
}

// release registers seq's full blocks for reuse and frees the rest.
func (s *scheduler) release(seq *sequence) {
	_ = s.e.cache.Commit(seq.id, seq.tokens[:seq.computed])
	s.e.cache.Release(seq.id)
}

// preempt swaps seq out: its blocks are released (kept as a reusable
// prefix while the pool allows) and it waits to be recomputed.
func (s *scheduler) preempt(seq *sequence) {
	s.release(seq)
	seq.computed = 0
	s.running = slices.DeleteFunc(s.running, func(o *sequence) bool { return o == seq })
	s.preemptions++
	s.wait(seq)
}

// planned is one sequence's share of a step.
type planned struct {
	seq   *sequence
	start int
	n     int
	all   bool // logits for every row (prompt logprobs)
}

// plan picks each running sequence's tokens for the next forward pass:
// decode rows first, then prompt chunks within MaxBatchTokens, in priority
// order. A sequence that cannot grow in the cache preempts the lowest-
// priority running sequence (possibly itself) until it can.
func (s *scheduler) plan() []planned {
	order := slices.Clone(s.running)
	slices.SortStableFunc(order, func(a, b *sequence) int {
		if a.less(b) {
			return -1
		}
		return 1
	})
	budget := s.e.cfg.MaxBatchTokens
	for _, seq := range order {
		if seq.pending() == 1 {
			budget--
		}
	}
	vocab := s.e.VocabSize()
	var out []planned
	for _, seq := range order {
		if !slices.Contains(s.running, seq) { // preempted by an earlier one
			continue
		}
		n := seq.pending()
		all := seq.scorePrompt
		if n > 1 {
			n = min(n, max(budget, 0))
			if all {
				n = min(n, max(promptRowsBytes/(4*vocab), 1))
			}
			if n == 0 {
				continue
			}
			budget -= n
		}
		if !s.grow(seq, n) {
			continue
		}
		out = append(out, planned{seq: seq, start: seq.computed, n: n, all: all})
	}
	return out
}

// reservedCache is the KV cache as the forward pass sees it: preparing
// positions never gives back the blocks a sequence reserved beyond them
// (its whole prompt, taken on admission), as a bare Prepare would.
type reservedCache struct{ *kvcache.Cache }

func (c reservedCache) Prepare(seq model.SeqID, start, n int) error {
	return c.Cache.Prepare(seq, start, max(n, c.Len(seq)-start))
}

// grow makes room for n more positions of seq, preempting from the lowest
// priority up (within one, the tenant running the most first; see
// preemptsBefore). It reports false when seq itself was preempted.
func (s *scheduler) grow(seq *sequence, n int) bool {
	for {
		err := reservedCache{s.e.cache}.Prepare(seq.id, seq.computed, n)
		if err == nil {
			return true
		}
		victim, share := seq, s.shares()
		for _, o := range s.running {
			if preemptsBefore(o, victim, share) {
				victim = o
			}
		}
		s.preempt(victim)
		if victim == seq {
			return false
		}
	}
}

// step runs one forward pass over the planned sequences and handles what
// it produced.
func (s *scheduler) step() {
	work := s.plan()
	if len(work) == 0 {
		return
	}
	batch := model.Batch{Seqs: make([]model.Sequence, len(work))}
	for i, w := range work {
		batch.Seqs[i] = model.Sequence{ID: w.seq.id, Tokens: w.seq.tokens[w.start : w.start+w.n], Start: w.start, AllLogits: w.all, Adapter: w.seq.req.adapter}
	}
	s.steps++
	s.rows += len(work)
	logits, err := s.e.model.Forward(&batch, reservedCache{s.e.cache})
	if err != nil {
		for _, w := range work {
			s.fail(w.seq.req, fmt.Errorf("local engine: forward pass: %w", err))
		}
		return
	}
	vocab := s.e.VocabSize()
	var ready []draw
	for i, w := range work {
		seq := w.seq
		rows := logits[i]
		seq.computed += w.n
		if w.all {
			s.scorePromptRows(seq, w.start, w.n, rows)
			rows = rows[(w.n-1)*vocab:]
		}
		if seq.computed >= len(seq.req.prompt) && !seq.committed {
			s.promptDone(seq)
		}
		if seq.pending() == 0 {
			ready = append(ready, draw{seq: seq, row: rows})
		}
	}
	// Each sequence's sampler and constraint matcher are its own, so they
	// run in parallel; what follows (stops, text, chunks) runs in order.
	s.e.model.Pool().Parallel(len(ready), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d := &ready[i]
			d.choice, d.err = d.seq.sampler.NextMasked(d.row, sample.Tokens{Prompt: d.seq.req.prompt, Output: d.seq.output},
				d.seq.allowed())
		}
	})
	for _, d := range ready {
		if !slices.Contains(s.running, d.seq) {
			continue // its request failed earlier in this loop
		}
		if d.err != nil {
			s.fail(d.seq.req, samplingError(d.err))
			continue
		}
		s.emit(d.seq, d.choice)
	}
}

// draw is a sequence whose next token is to be sampled from row.
type draw struct {
	seq    *sequence
	row    []float32
	choice sample.Choice
	err    error
}

// scorePromptRows records the logprobs of the prompt tokens that rows
// (positions start … start+n-1) predict.
func (s *scheduler) scorePromptRows(seq *sequence, start, n int, rows []float32) {
	vocab := s.e.VocabSize()
	prompt := seq.req.prompt
	for j := range n {
		next := start + j + 1
		if next >= len(prompt) {
			break
		}
		c := sample.Score(rows[j*vocab:(j+1)*vocab], prompt[next], seq.req.promptTop, s.e.tok.VocabSize())
		seq.plp[next] = s.logprobs(c)
	}
}

// promptDone runs once a choice's prompt is in the cache: its blocks are
// registered for sharing, the prompt logprobs published, and the request's
// other choices queued to attach to those blocks.
func (s *scheduler) promptDone(seq *sequence) {
	seq.committed = true
	_ = s.e.cache.Commit(seq.id, seq.tokens[:len(seq.req.prompt)])
	if seq.scorePrompt {
		seq.scorePrompt = false
		seq.req.gen.setPromptLogprobs(seq.plp)
	}
	r := seq.req
	if seq.index != 0 {
		return
	}
	for i := 1; i < r.n; i++ {
		if r.seqs[i] != nil {
			continue
		}
		f, err := newSequence(r, i, s.e.tok, s.e.VocabSize())
		if err != nil {
			s.fail(r, err)
			return
		}
		f.admitted = true
		f.committed = true // the leader registered the prompt
		r.seqs[i] = f
		s.wait(f)
	}
}

// emit appends the sampled token to seq, decides whether the choice ends
// (vLLM's order: length, end-of-sequence, stop token, then a stop string in
// the text, then the end of a constrained output) and hands the chunk to
// the reader.
func (s *scheduler) emit(seq *sequence, c sample.Choice) {
	r := seq.req
	tok := c.Token
	guideDone := false
	if seq.guide != nil {
		var err error
		if guideDone, err = seq.follow(tok); err != nil {
			// The mask let through only tokens the constraint accepts.
			s.fail(r, fmt.Errorf("local engine: structured output: %w", err))
			return
		}
	}
	seq.output = append(seq.output, tok)
	seq.tokens = append(seq.tokens, int32(tok))

	var finish FinishReason
	var stopReason any
	switch {
	case len(seq.tokens) >= s.e.maxModelLen || len(seq.output) >= r.maxTokens:
		finish = FinishLength
	case tok == r.eos:
		finish = FinishStop
	case slices.Contains(r.stopIDs, tok):
		finish, stopReason = FinishStop, tok
	}
	if str, ok := seq.detok.update(tok, finish == FinishStop); ok {
		finish, stopReason = FinishStop, str
	}
	if finish == "" && guideDone {
		finish = FinishStop
	}
	chunk := Chunk{Index: seq.index, TokenIDs: []int{tok}, Text: seq.detok.delta(finish != ""),
		FinishReason: finish, StopReason: stopReason}
	if r.logprobs {
		lp := s.logprobs(c)
		chunk.Logprobs = []Logprobs{*lp}
	}
	r.gen.push(chunk)
	if finish != "" {
		s.release(seq)
		s.running = slices.DeleteFunc(s.running, func(o *sequence) bool { return o == seq })
		r.finished++
		if r.finished == r.n {
			r.gen.finish(nil)
		}
	}
}

// logprobs converts a sampler's report, adding each token's text.
func (s *scheduler) logprobs(c sample.Choice) *Logprobs {
	lp := &Logprobs{TokenLogprob: TokenLogprob{ID: c.Token, Token: s.tokenText(c.Token), Logprob: c.Logprob, Rank: c.Rank}}
	if len(c.Top) > 0 {
		lp.Top = make([]TokenLogprob, len(c.Top))
		for i, t := range c.Top {
			lp.Top[i] = TokenLogprob{ID: t.Token, Token: s.tokenText(t.Token), Logprob: t.Logprob, Rank: i + 1}
		}
	}
	return lp
}

// tokenText is a token's text alone, as vLLM reports logprob tokens:
// decode([id]) with special tokens kept.
func (s *scheduler) tokenText(id int) string {
	return s.e.tok.Decode([]int{id}, tokenizer.DecodeOptions{})
}

// fail ends a request with err, freeing all its sequences.
func (s *scheduler) fail(r *request, err error) {
	s.running = slices.DeleteFunc(s.running, func(seq *sequence) bool {
		if seq.req != r {
			return false
		}
		s.release(seq)
		return true
	})
	s.waiting = slices.DeleteFunc(s.waiting, func(seq *sequence) bool {
		if seq.req != r {
			return false
		}
		s.unwait(seq)
		return true
	})
	r.gen.finish(err)
}

// shutdown ends every request with ErrClosed.
func (s *scheduler) shutdown() {
	for _, seq := range s.waiting {
		if !seq.admitted {
			seq.req.admitted <- ErrClosed
		}
		seq.req.gen.finish(ErrClosed)
	}
	for _, seq := range s.running {
		s.release(seq)
		seq.req.gen.finish(ErrClosed)
	}
	s.waiting, s.running = nil, nil
	clear(s.waitingBy)
	// Requests still being submitted see quit in Generate.
	for {
		select {
		case r := <-s.e.submit:
			r.admitted <- ErrClosed
		default:
			return
		}
	}
}

// publish stores the load figures Stats reports.
func (s *scheduler) publish() {
	kv := s.e.cache.Stats()
	st := Stats{Running: len(s.running), Waiting: len(s.waiting), Preemptions: s.preemptions, Steps: s.steps, Rows: s.rows,
		KV: KVBlocks{Total: kv.Total, InUse: kv.InUse, Idle: kv.Idle, Free: kv.Free}}
	s.e.statsMu.Lock()
	s.e.stats = st
	s.e.statsMu.Unlock()
}
