package constrain

import (
	"fmt"
	"math/bits"
	"slices"
)

// Constraint is a compiled constraint for one vocabulary. It is safe for
// concurrent use: every sequence decoding under it has its own Matcher,
// and they share the automaton and the masks computed so far.
type Constraint struct {
	dfa   *dfa
	vocab *Vocabulary
	key   string
}

// Matcher follows one sequence through a constraint: Mask says which
// tokens may come next, Advance takes the token sampled. It is not safe
// for concurrent use; Clone gives an independent copy (for n > 1 or
// speculative branches) and Rollback undoes tokens.
type Matcher struct {
	c      *Constraint
	gen    uint64 // the automaton generation state and history belong to
	state  int32
	ended  bool    // an end-of-sequence token was accepted
	tokens []int32 // accepted, the end token included
	// history[i] is the state before tokens[i] (of generation gen).
	history []int32
}

// NewMatcher starts a sequence at the beginning of the constraint.
func (c *Constraint) NewMatcher() *Matcher {
	c.dfa.mu.Lock()
	defer c.dfa.mu.Unlock()
	return &Matcher{c: c, gen: c.dfa.gen, state: c.dfa.start}
}

// lock takes the automaton and brings the matcher's states up to its
// generation, walking the accepted tokens again after a reset.
func (m *Matcher) lock() *dfa {
	d := m.c.dfa
	d.mu.Lock()
	if m.gen == d.gen {
		return d
	}
	s := d.start
	for i, id := range m.tokens {
		m.history[i] = s
		if !m.c.vocab.isEnd(int(id)) {
			s = d.walk(s, m.c.vocab.spellings[id]) // accepted before: never dead
		}
	}
	m.state, m.gen = s, d.gen
	return d
}

// unlock keeps the automaton within its budget and releases it.
func unlock(d *dfa) {
	d.trim()
	d.mu.Unlock()
}

// Mask writes the allowed next tokens into mask as a bitset (bit id%64 of
// word id/64 set means allowed); mask must hold Vocabulary.MaskWords
// words. End-of-sequence tokens are allowed exactly when the output so far
// is complete; after one has been accepted nothing is allowed.
func (m *Matcher) Mask(mask []uint64) {
	if m.ended {
		clear(mask)
		return
	}
	d := m.lock()
	shared := m.c.mask(m.state)
	unlock(d)
	copy(mask, shared) // masks are never modified once made
}

// Advance moves past token id. It returns an error wrapping ErrRejected,
// leaving the matcher unchanged, when the constraint does not allow it.
func (m *Matcher) Advance(id int) error {
	if m.ended {
		return fmt.Errorf("%w: token %d after the end of the output", ErrRejected, id)
	}
	v := m.c.vocab
	d := m.lock()
	defer unlock(d)
	if v.isEnd(id) {
		if !d.states[m.state].accept {
			return fmt.Errorf("%w: end of sequence before the output is complete", ErrRejected)
		}
		m.accept(id, m.state)
		m.ended = true
		return nil
	}
	if id < 0 || id >= len(v.spellings) || len(v.spellings[id]) == 0 {
		return fmt.Errorf("%w: token %d writes no text", ErrRejected, id)
	}
	next := d.walk(m.state, v.spellings[id])
	if next == transDead {
		return fmt.Errorf("%w: token %d (%q)", ErrRejected, id, v.spellings[id])
	}
	m.accept(id, next)
	return nil
}

func (m *Matcher) accept(id int, next int32) {
	m.tokens = append(m.tokens, int32(id))
	m.history = append(m.history, m.state)
	m.state = next
}

// Complete reports whether the output so far is a whole match: an
// end-of-sequence token may come now.
func (m *Matcher) Complete() bool {
	if m.ended {
		return true
	}
	d := m.lock()
	defer unlock(d)
	return d.states[m.state].accept
}

// Ended reports whether an end-of-sequence token has been accepted.
func (m *Matcher) Ended() bool { return m.ended }

// CanContinue reports whether any more text may follow (false when the
// constraint is complete and admits nothing longer: the engine may stop
// without waiting for the model's end-of-sequence token).
func (m *Matcher) CanContinue() bool {
	if m.ended {
		return false
	}
	d := m.lock()
	defer unlock(d)
	return len(d.states[m.state].stacks) > 0
}

// Tokens is how many tokens have been accepted.
func (m *Matcher) Tokens() int { return len(m.tokens) }

// Rollback undoes the last n accepted tokens (all of them when n is
// larger). After a reset of the automaton the history is stale, and the
// next call walks the remaining tokens again.
func (m *Matcher) Rollback(n int) {
	n = min(n, len(m.tokens))
	if n <= 0 {
		return
	}
	keep := len(m.tokens) - n
	m.state = m.history[keep]
	m.tokens = m.tokens[:keep]
	m.history = m.history[:keep]
	m.ended = false
}

// Clone is an independent matcher at the same point.
func (m *Matcher) Clone() *Matcher {
	c := *m
	c.tokens = slices.Clone(m.tokens)
	c.history = slices.Clone(m.history)
	return &c
}

// mask is the allowed-token bitset of DFA state s, computed by one walk of
// the vocabulary trie and kept (interned) while the distinct masks are
// within bounds. The
// returned slice is shared and must not be modified.
// The automaton must be locked.
func (c *Constraint) mask(s int32) []uint64 {
	d := c.dfa
	if m := d.states[s].mask; m != nil {
		return m
	}
	v := c.vocab
	mask := make([]uint64, v.MaskWords())
	var at [maxTokenBytes + 1]int32
	at[0] = s
	for i := int32(1); i < int32(len(v.label)); {
		depth := v.depth[i]
		if depth > maxTokenBytes {
			i = v.skip[i]
			continue
		}
		t := d.step(at[depth-1], v.label[i])
		if t == transDead {
			i = v.skip[i]
			continue
		}
		at[depth] = t
		for _, id := range v.ids[v.idStart[i]:v.idStart[i+1]] {
			mask[id>>6] |= 1 << (uint(id) & 63)
		}
		i++
	}
	if d.states[s].accept {
		for _, id := range v.end {
			mask[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	return d.intern(s, mask)
}

// intern gives state s the kept mask equal to mask, keeping mask as a new
// one while fewer than maxMask are kept. It returns the mask s uses.
func (d *dfa) intern(s int32, mask []uint64) []uint64 {
	h := maskHash(mask)
	for _, kept := range d.maskIndex[h] {
		if slices.Equal(kept, mask) {
			d.states[s].mask = kept
			return kept
		}
	}
	if d.masks < d.maxMask {
		d.maskIndex[h] = append(d.maskIndex[h], mask)
		d.states[s].mask = mask
		d.masks++
	}
	return mask
}

// maskHash is an FNV-1a hash of a mask's words.
func maskHash(mask []uint64) uint64 {
	h := uint64(14695981039346656037)
	for _, w := range mask {
		h = (h ^ w) * 1099511628211
	}
	return h
}

// maxTokenBytes bounds how long a token's spelling may be for the mask to
// consider it; real vocabularies stay far below.
const maxTokenBytes = 256

// Allowed reports whether bit id of mask is set.
func Allowed(mask []uint64, id int) bool {
	return mask[id>>6]&(1<<(uint(id)&63)) != 0
}

// CountAllowed is how many tokens mask allows.
func CountAllowed(mask []uint64) int {
	n := 0
	for _, w := range mask {
		n += bits.OnesCount64(w)
	}
	return n
}
